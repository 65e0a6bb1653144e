// Linux epoll(7), which Swift's Glibc module does not include; used only by BlueZ's NotifySocketPoller.
#include <sys/epoll.h>
