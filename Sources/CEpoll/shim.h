// Linux epoll(7) and eventfd(2), which Swift's Glibc module does not include; used only by the
// EventLoop module.
#include <sys/epoll.h>
#include <sys/eventfd.h>
