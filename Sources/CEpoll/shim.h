// Linux's epoll and eventfd, which Swift's Glibc module does not import (for
// `EpollFloorServer`).
#include <sys/epoll.h>
#include <sys/eventfd.h>
