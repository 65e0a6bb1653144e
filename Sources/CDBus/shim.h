#ifndef BLEBRIDGE_CDBUS_SHIM_H
#define BLEBRIDGE_CDBUS_SHIM_H
#include <dbus/dbus.h>
#endif
