#ifndef BLEBRIDGE_CMOSQUITTO_SHIM_H
#define BLEBRIDGE_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#include <mqtt_protocol.h>
#endif
