#ifndef BLEBRIDGE_CDBUS_SHIM_H
#define BLEBRIDGE_CDBUS_SHIM_H
#include <dbus/dbus.h>
#include <sys/eventfd.h>  /* the connection thread's wake-up descriptor */
#endif
