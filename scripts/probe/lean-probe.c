// An independent, lean load probe for issue 16's comparisons: one thread, epoll, raw sockets, no
// JSON parsing (answers and events are found by byte search), so it costs the cores it shares
// with the server as little as possible, and the same for both servers. It shares no code with
// Kindling or kindling-bench, so it also checks that the harness measures the servers rather
// than itself. Written by hand for Kindling; built by scripts/lean-probe.sh with the system cc.
//
//   lean-probe writes ws|redis PORT CONNECTIONS IN_FLIGHT SECONDS VALUE_BYTES [SERVER_PID]
//     Each connection keeps IN_FLIGHT writes of its own path (Kindling put of /writes/wI) or key
//     (Redis SET writes:wI) in flight; a value is a JSON string of VALUE_BYTES bytes.
//   lean-probe fanout ws|redis PORT SUBSCRIBERS WRITES WINDOW RATE [SERVER_PID]
//     SUBSCRIBERS listen to /fanout/value (Redis: SUBSCRIBE fanout); one writer puts (PUBLISHes)
//     {"ts":NS,"seq":N,"pad":"…"} at most WINDOW writes ahead of the average subscriber, and at
//     most RATE writes a second when RATE > 0. Latency is from the write's timestamp to receipt.
//     With READERS=N in the environment (issue 40's unbatched regime), N threads read the
//     subscribers, each its share with an epoll of its own, as fast as they can, and the main
//     thread only writes: few events then share one socket write. Without it one thread does all.
//
// Prints one line: the rate, the server's CPU per operation with its user and kernel parts (from
// /proc/SERVER_PID/stat) and the probe's own.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { IN_BYTES = 1 << 16, OUT_BYTES = 1 << 21, BUCKETS = 100000 };

typedef struct {
    int fd;
    long next;
    unsigned char in[IN_BYTES];
    size_t length;
    int upgraded, greeted, listening;
} connection;

static int websocket;
static long answers;
static _Atomic long refusals;
// Deliveries a thread counted and has not yet added to `deliveries`, which every thread reads.
static __thread long unshared;
static _Atomic long deliveries;
// Write-to-receipt latency in 10 µs buckets up to one second; the last holds everything longer.
// Each thread counts into its own, added into `histogram` when it ends.
static __thread long *own_histogram;
static long histogram[BUCKETS + 1];
static pthread_mutex_t histogram_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char out[OUT_BYTES];

static uint64_t nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

// User and system CPU seconds of process `pid` (fields 14 and 15 of /proc/PID/stat).
typedef struct { double user, system; } cpu_time;

static cpu_time cpu_seconds(int pid) {
    cpu_time none = {0, 0};
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *file = fopen(path, "r");
    if (!file) return none;
    size_t count = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[count] = 0;
    char *field = strrchr(text, ')');
    if (!field) return none;
    for (int i = 0; i < 12 && field; i++) field = strchr(field + 1, ' ');
    unsigned long user = 0, system = 0;
    if (field) sscanf(field, " %lu %lu", &user, &system);
    double tick = (double)sysconf(_SC_CLK_TCK);
    cpu_time time = {(double)user / tick, (double)system / tick};
    return time;
}

// The CPU seconds `pid` spent since `start` (both kinds together); with `split`, each kind too.
static double cpu_since(int pid, cpu_time start, cpu_time *split) {
    cpu_time now = cpu_seconds(pid), spent = {now.user - start.user, now.system - start.system};
    if (split) *split = spent;
    return spent.user + spent.system;
}

// The write system calls process `pid` made so far (`syscw` of /proc/PID/io: write and writev),
// so a run can say how many events share one socket write.
static long write_calls(int pid) {
    char path[64], line[128];
    snprintf(path, sizeof path, "/proc/%d/io", pid);
    FILE *file = fopen(path, "r");
    if (!file) return 0;
    long calls = 0;
    while (fgets(line, sizeof line, file)) {
        if (strncmp(line, "syscw: ", 7) == 0) calls = atol(line + 7);
    }
    fclose(file);
    return calls;
}

// The context switches of every thread of process `pid` so far (voluntary and not, from
// /proc/PID/task/*/status): a server whose threads hand work to each other shows it here
// (issue 40, round 11: a reader thread beside the event loop, about one switch per two writes).
static long context_switches(int pid) {
    char path[64], line[128];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *tasks = opendir(path);
    if (!tasks) return 0;
    long switches = 0;
    struct dirent *task;
    while ((task = readdir(tasks))) {
        if (task->d_name[0] == '.') continue;
        char status[300];
        snprintf(status, sizeof status, "/proc/%d/task/%s/status", pid, task->d_name);
        FILE *file = fopen(status, "r");
        if (!file) continue;
        while (fgets(line, sizeof line, file)) {
            if (strstr(line, "ctxt_switches:")) switches += atol(strchr(line, ':') + 1);
        }
        fclose(file);
    }
    closedir(tasks);
    return switches;
}

static void send_all(int fd, const void *bytes, size_t length) {
    size_t sent = 0;
    while (sent < length) {
        ssize_t written = write(fd, (const char *)bytes + sent, length - sent);
        if (written < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            perror("write");
            exit(1);
        }
        sent += (size_t)written;
    }
}

// A masked text frame holding `body` (clients must mask; a fixed key is enough for a probe).
static size_t frame(unsigned char *into, const char *body, size_t length) {
    size_t header = 2;
    into[0] = 0x81;
    if (length < 126) {
        into[1] = (unsigned char)(0x80 | length);
    } else {
        into[1] = 0x80 | 126;
        into[2] = (unsigned char)(length >> 8);
        into[3] = (unsigned char)length;
        header = 4;
    }
    static const unsigned char mask[4] = {0x5a, 0x17, 0xc3, 0x81};
    memcpy(into + header, mask, 4);
    header += 4;
    for (size_t i = 0; i < length; i++) into[header + i] = (unsigned char)body[i] ^ mask[i & 3];
    return header + length;
}

static int open_connection(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) < 0) {
        perror("connect");
        exit(1);
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (websocket) {
        char request[512];
        int length = snprintf(request, sizeof request,
            "GET /.ws?v=5&ns=bench HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
            port);
        send_all(fd, request, (size_t)length);
    }
    return fd;
}

static void record_delivery(const unsigned char *message, size_t length) {
    const unsigned char *stamp = memmem(message, length, "\"ts\":", 5);
    if (!stamp) return;
    uint64_t sent = strtoull((const char *)stamp + 5, NULL, 10);
    uint64_t bucket = (nanoseconds() - sent) / 10000;
    own_histogram[bucket > BUCKETS ? BUCKETS : bucket]++;
    unshared++;
}

// One whole server message: an answer (counted for the writer), an event (a subscriber's).
static void take_message(connection *c, int writer, const unsigned char *message, size_t length) {
    if (!c->greeted) {
        c->greeted = 1;
    } else if (memmem(message, length, "\"s\":\"ok\"", 8)) {
        if (writer) answers++; else c->listening = 1;
    } else if (memmem(message, length, "\"s\":", 4)) {
        refusals++;
        if (writer) answers++;
    } else if (!writer) {
        record_delivery(message, length);
    }
}

// Consumes the whole messages at the start of c->in, keeping a partial one.
static void consume(connection *c, int writer) {
    size_t at = 0;
    if (websocket && !c->upgraded) {
        unsigned char *end = memmem(c->in, c->length, "\r\n\r\n", 4);
        if (!end) return;
        c->upgraded = 1;
        at = (size_t)(end + 4 - c->in);
    }
    while (at < c->length) {
        unsigned char *start = c->in + at, *end = c->in + c->length;
        if (websocket) {
            if (end - start < 2) break;
            size_t length = start[1] & 127, header = 2;
            if (length == 126) {
                if (end - start < 4) break;
                length = (size_t)start[2] << 8 | start[3];
                header = 4;
            } else if (length == 127) {
                fprintf(stderr, "a frame over 64 KiB\n");
                exit(1);
            }
            if ((size_t)(end - start) < header + length) break;
            take_message(c, writer, start + header, length);
            at += header + length;
            continue;
        }
        // RESP: a simple reply (+OK, :N, -ERR) is an answer; an array is a pub/sub message.
        unsigned char *line = memmem(start, (size_t)(end - start), "\r\n", 2);
        if (!line) break;
        if (*start != '*') {
            if (*start == '-') refusals++;
            answers++;
            at = (size_t)(line + 2 - c->in);
            continue;
        }
        long parts = atol((const char *)start + 1), part = 0;
        unsigned char *next = line + 2, *payload = NULL;
        size_t payload_length = 0;
        for (; part < parts && next < end; part++) {
            unsigned char *item = memmem(next, (size_t)(end - next), "\r\n", 2);
            if (!item) break;
            if (*next == ':') {
                next = item + 2;
                continue;
            }
            long length = atol((const char *)next + 1);
            if (item + 2 + length + 2 > end) break;
            payload = item + 2;
            payload_length = (size_t)length;
            next = payload + length + 2;
        }
        if (part < parts) break;
        // A pub/sub message starts `*3\r\n$7\r\nmessage`; a subscription's confirmation does not.
        size_t head = (size_t)(next - start) < 16 ? (size_t)(next - start) : 16;
        if (memmem(start, head, "$7\r\nmessage", 11)) record_delivery(payload, payload_length);
        else c->listening = 1;
        at = (size_t)(next - c->in);
    }
    memmove(c->in, c->in + at, c->length - at);
    c->length -= at;
}

// Reads what `c` has; false when the server closed it.
static int read_into(connection *c) {
    ssize_t count = read(c->fd, c->in + c->length, sizeof c->in - c->length);
    if (count <= 0) return 0;
    c->length += (size_t)count;
    return 1;
}

static connection *open_all(int port, int count, int epoll) {
    connection *all = calloc((size_t)count, sizeof(connection));
    if (!all) exit(1);
    for (int i = 0; i < count; i++) {
        all[i].fd = open_connection(port);
        all[i].next = 1;
        if (!websocket) all[i].upgraded = all[i].greeted = 1;
        struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        epoll_ctl(epoll, EPOLL_CTL_ADD, all[i].fd, &event);
    }
    return all;
}

// Appends `count` writes of connection `index` to `into`.
static size_t writes(connection *c, int index, int value_bytes, long count, unsigned char *into) {
    size_t length = 0;
    for (long i = 0; i < count; i++) {
        char value[4200], body[4400];
        long sequence = c->next++;
        int used = snprintf(value, sizeof value, "\"%ld", sequence);
        while (used < value_bytes - 1 && used < (int)sizeof value - 2) value[used++] = 'x';
        value[used++] = '"';
        value[used] = 0;
        if (websocket) {
            int body_length = snprintf(body, sizeof body, "{\"t\":\"d\",\"d\":{\"r\":%ld,\"a\":\"p\",\"b\":{\"p\":\"/writes/w%d\",\"d\":%s}}}",
                sequence, index, value);
            length += frame(into + length, body, (size_t)body_length);
        } else {
            char key[32];
            int key_length = snprintf(key, sizeof key, "writes:w%d", index);
            length += (size_t)sprintf((char *)into + length, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", key_length, key, used, value);
        }
    }
    return length;
}

static int run_writes(int port, int count, long in_flight, double seconds, int value_bytes, int server) {
    if (count < 1 || in_flight < 1 || value_bytes < 0 || value_bytes > 4000 || in_flight * (value_bytes + 100) > OUT_BYTES) {
        fprintf(stderr, "connections and in-flight at least 1, values of 0…4000 bytes\n");
        return 2;
    }
    int epoll = epoll_create1(0);
    connection *all = open_all(port, count, epoll);
    for (int ready = websocket ? 0 : count; ready < count;) {
        struct epoll_event events[256];
        int ready_now = epoll_wait(epoll, events, 256, 10000);
        if (ready_now <= 0) { fprintf(stderr, "handshakes timed out\n"); return 1; }
        for (int e = 0; e < ready_now; e++) {
            connection *c = &all[events[e].data.u32];
            if (!read_into(c)) { fprintf(stderr, "closed during the handshake\n"); return 1; }
            int greeted = c->greeted;
            consume(c, 1);
            if (!greeted && c->greeted) ready++;
        }
    }
    answers = refusals = 0;
    cpu_time server_start = cpu_seconds(server), own_start = cpu_seconds(getpid());
    long switches_start = context_switches(server);
    uint64_t start = nanoseconds(), deadline = start + (uint64_t)(seconds * 1e9);
    for (int i = 0; i < count; i++) send_all(all[i].fd, out, writes(&all[i], i, value_bytes, in_flight, out));
    for (;;) {
        struct epoll_event events[512];
        int ready_now = epoll_wait(epoll, events, 512, 1000);
        uint64_t now = nanoseconds();
        if (now >= deadline) break;
        for (int e = 0; e < ready_now; e++) {
            int index = (int)events[e].data.u32;
            connection *c = &all[index];
            if (!read_into(c)) { fprintf(stderr, "a connection closed\n"); return 1; }
            long before = answers;
            consume(c, 1);
            long answered = answers - before;
            if (answered > 0) send_all(c->fd, out, writes(c, index, value_bytes, answered, out));
        }
    }
    double elapsed = (double)(nanoseconds() - start) / 1e9;
    cpu_time server_time;
    double server_cpu = cpu_since(server, server_start, &server_time), own_cpu = cpu_since(getpid(), own_start, NULL);
    double per_answer = answers ? 1e9 / (double)answers : 0;
    double switches = answers ? (double)(context_switches(server) - switches_start) / (double)answers : 0;
    printf("writes %s: %.0f acks/s, %ld refused, server %.2f cores (%.0f ns/write: user %.0f, kernel %.0f), probe %.2f cores (%.0f ns/write), "
           "%.3f server context switches/write\n",
        websocket ? "kindling" : "redis", (double)answers / elapsed, refusals, server_cpu / elapsed, server_cpu * per_answer, server_time.user * per_answer,
        server_time.system * per_answer, own_cpu / elapsed, own_cpu * per_answer, switches);
    return 0;
}

// Makes this thread's deliveries seen by the others.
static void share_deliveries(void) {
    if (unshared) atomic_fetch_add_explicit(&deliveries, unshared, memory_order_relaxed);
    unshared = 0;
}

// Adds this thread's latencies into `histogram`.
static void merge_histogram(void) {
    pthread_mutex_lock(&histogram_lock);
    for (int bucket = 0; bucket <= BUCKETS; bucket++) histogram[bucket] += own_histogram[bucket];
    pthread_mutex_unlock(&histogram_lock);
    memset(own_histogram, 0, sizeof(long) * (BUCKETS + 1));
}

typedef struct {
    connection *all;
    int first, count, epoll;
    pthread_t thread;
} reader;

static _Atomic int stopping;

// A reader thread: reads its share of the subscribers until every delivery arrived.
static void *read_subscribers(void *argument) {
    reader *r = argument;
    own_histogram = calloc(BUCKETS + 1, sizeof(long));
    struct epoll_event events[1024];
    while (!atomic_load_explicit(&stopping, memory_order_relaxed)) {
        int ready_now = epoll_wait(r->epoll, events, 1024, 10);
        for (int e = 0; e < ready_now; e++) {
            connection *c = &r->all[events[e].data.u32];
            if (!read_into(c)) { fprintf(stderr, "a connection closed\n"); exit(1); }
            consume(c, 0);
        }
        share_deliveries();
    }
    merge_histogram();
    return NULL;
}

static double percentile(double fraction) {
    long total = 0;
    for (int bucket = 0; bucket <= BUCKETS; bucket++) {
        total += histogram[bucket];
        if ((double)total >= (double)deliveries * fraction) return bucket / 100.0;
    }
    return BUCKETS / 100.0;
}

static int run_fanout(int port, int subscribers, long total, long window, double rate, int server) {
    if (subscribers < 1 || total < 1 || window < 1 || window * 200 > OUT_BYTES) {
        fprintf(stderr, "subscribers, writes and window at least 1, window at most %d\n", OUT_BYTES / 200);
        return 2;
    }
    int epoll = epoll_create1(0);
    // Connection 0 writes; 1… listen.
    connection *all = open_all(port, subscribers + 1, epoll);
    if (!websocket) {
        for (int i = 1; i <= subscribers; i++) send_all(all[i].fd, "*2\r\n$9\r\nSUBSCRIBE\r\n$6\r\nfanout\r\n", 31);
    }
    const char *listen = "{\"t\":\"d\",\"d\":{\"r\":1,\"a\":\"q\",\"b\":{\"p\":\"/fanout/value\",\"h\":\"\"}}}";
    for (int listening = 0; listening < subscribers;) {
        struct epoll_event events[512];
        int ready_now = epoll_wait(epoll, events, 512, 10000);
        if (ready_now <= 0) { fprintf(stderr, "listens timed out (%d listening)\n", listening); return 1; }
        for (int e = 0; e < ready_now; e++) {
            int index = (int)events[e].data.u32;
            connection *c = &all[index];
            if (!read_into(c)) { fprintf(stderr, "closed while listening\n"); return 1; }
            int greeted = c->greeted, was = c->listening;
            consume(c, index == 0);
            if (index > 0 && websocket && !greeted && c->greeted) send_all(c->fd, out, frame(out, listen, strlen(listen)));
            if (index > 0 && !was && c->listening) listening++;
        }
    }
    int reader_count = getenv("READERS") ? atoi(getenv("READERS")) : 0;
    if (reader_count < 0 || reader_count > 64) { fprintf(stderr, "READERS is 0…64\n"); return 2; }
    reader *readers = calloc((size_t)(reader_count ? reader_count : 1), sizeof(reader));
    // The subscribers move to the readers' epolls, an equal share each.
    for (int t = 0; t < reader_count; t++) {
        reader *r = &readers[t];
        r->all = all;
        r->first = 1 + t * subscribers / reader_count;
        r->count = 1 + (t + 1) * subscribers / reader_count - r->first;
        r->epoll = epoll_create1(0);
        for (int i = r->first; i < r->first + r->count; i++) {
            epoll_ctl(epoll, EPOLL_CTL_DEL, all[i].fd, NULL);
            struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
            epoll_ctl(r->epoll, EPOLL_CTL_ADD, all[i].fd, &event);
        }
    }
    own_histogram = calloc(BUCKETS + 1, sizeof(long));
    atomic_store(&deliveries, 0);
    memset(histogram, 0, sizeof histogram);
    for (int t = 0; t < reader_count; t++) pthread_create(&readers[t].thread, NULL, read_subscribers, &readers[t]);
    cpu_time server_start = cpu_seconds(server), own_start = cpu_seconds(getpid());
    long server_writes_start = server ? write_calls(server) : 0;
    uint64_t start = nanoseconds();
    long sent = 0, expected = total * subscribers;
    for (;;) {
        share_deliveries();
        long delivered = atomic_load_explicit(&deliveries, memory_order_relaxed);
        if (delivered >= expected) break;
        uint64_t now = nanoseconds();
        long allowed = delivered / subscribers + window - sent;
        if (rate > 0) {
            long due = (long)((double)(now - start) / 1e9 * rate) + 1 - sent;
            if (due < allowed) allowed = due;
        }
        if (allowed > total - sent) allowed = total - sent;
        size_t length = 0;
        for (long i = 0; i < allowed; i++) {
            char value[160], body[320];
            sent++;
            int value_length = snprintf(value, sizeof value, "{\"ts\":%llu,\"seq\":%ld,\"pad\":\"xxxxxxxxxxxxxxxx\"}", (unsigned long long)nanoseconds(), sent);
            if (websocket) {
                int body_length = snprintf(body, sizeof body, "{\"t\":\"d\",\"d\":{\"r\":%ld,\"a\":\"p\",\"b\":{\"p\":\"/fanout/value\",\"d\":%s}}}", sent, value);
                length += frame(out + length, body, (size_t)body_length);
            } else {
                length += (size_t)sprintf((char *)out + length, "*3\r\n$7\r\nPUBLISH\r\n$6\r\nfanout\r\n$%d\r\n%s\r\n", value_length, value);
            }
        }
        if (length > 0) send_all(all[0].fd, out, length);
        struct epoll_event events[1024];
        int ready_now = epoll_wait(epoll, events, 1024, 1);
        for (int e = 0; e < ready_now; e++) {
            int index = (int)events[e].data.u32;
            connection *c = &all[index];
            if (!read_into(c)) { fprintf(stderr, "a connection closed\n"); return 1; }
            consume(c, index == 0);
        }
        if (nanoseconds() - start > 300000000000u) { fprintf(stderr, "gave up after 300 s: %ld of %ld delivered\n", delivered, expected); return 1; }
    }
    double elapsed = (double)(nanoseconds() - start) / 1e9;
    cpu_time server_time;
    double server_cpu = cpu_since(server, server_start, &server_time), own_cpu = cpu_since(getpid(), own_start, NULL);
    long server_writes = server ? write_calls(server) - server_writes_start : 0;
    atomic_store(&stopping, 1);
    for (int t = 0; t < reader_count; t++) pthread_join(readers[t].thread, NULL);
    merge_histogram();
    long total_delivered = atomic_load(&deliveries);
    double per_delivery = total_delivered ? 1e9 / (double)total_delivered : 0;
    printf("fanout %s%s: %.0f deliveries/s, p50 %.2f ms, p99 %.2f ms, server %.2f cores (%.0f ns/delivery, %.2f deliveries/write call; user %.0f, kernel %.0f), probe %.2f cores (%.0f ns/delivery)\n",
        websocket ? "kindling" : "redis", reader_count ? " (readers on threads)" : "", (double)total_delivered / elapsed, percentile(0.5), percentile(0.99), server_cpu / elapsed,
        server_cpu * per_delivery, server_writes ? (double)total_delivered / (double)server_writes : 0, server_time.user * per_delivery,
        server_time.system * per_delivery, own_cpu / elapsed, own_cpu * per_delivery);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 8 || (strcmp(argv[2], "ws") != 0 && strcmp(argv[2], "redis") != 0)) {
        fprintf(stderr, "usage: lean-probe writes ws|redis PORT CONNECTIONS IN_FLIGHT SECONDS VALUE_BYTES [SERVER_PID]\n"
                        "       lean-probe fanout ws|redis PORT SUBSCRIBERS WRITES WINDOW RATE [SERVER_PID]\n");
        return 2;
    }
    websocket = strcmp(argv[2], "ws") == 0;
    int port = atoi(argv[3]), server = argc > 8 ? atoi(argv[8]) : 0;
    if (strcmp(argv[1], "writes") == 0) return run_writes(port, atoi(argv[4]), atol(argv[5]), atof(argv[6]), atoi(argv[7]), server);
    if (strcmp(argv[1], "fanout") == 0) return run_fanout(port, atoi(argv[4]), atol(argv[5]), atol(argv[6]), atof(argv[7]), server);
    fprintf(stderr, "unknown measure %s\n", argv[1]);
    return 2;
}
