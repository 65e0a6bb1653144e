#ifndef BLEBRIDGE_CCRYPTO_SHIM_H
#define BLEBRIDGE_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#endif
