/* square.c - a SEAR external controller in plain C: drives the demo robot round its 12 m square by GPS
 * and compass, as the demo's Python user code does (without its obstacle avoidance).
 *
 *   cc -O2 -o square square.c -lm
 *   sear run demo.prj --external --headless --duration 40     (prints PORT and TOKEN)
 *   ./square PORT TOKEN
 *
 * The protocol (docs/controller-protocol.md): TCP to 127.0.0.1, frames of a 4-byte big-endian length and
 * one MessagePack map. Only POSIX sockets and the C library; the MessagePack it needs is below: maps,
 * strings, doubles and arrays to write, and a reader that picks out numbers and skips everything else.
 */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- MessagePack writing ------------------------------------------------------------------------- */
typedef struct { unsigned char b[4096]; size_t n; } Buf;

static void put(Buf *o, const void *p, size_t n) { memcpy(o->b + o->n, p, n); o->n += n; }
static void put1(Buf *o, unsigned c) { o->b[o->n++] = (unsigned char)c; }
static void put_map(Buf *o, unsigned n) { put1(o, 0x80 | n); }      /* up to 15 entries */
static void put_arr(Buf *o, unsigned n) { put1(o, 0x90 | n); }      /* up to 15 items */
static void put_str(Buf *o, const char *s) {
    size_t n = strlen(s);
    if (n < 32) put1(o, 0xa0 | (unsigned)n); else { put1(o, 0xd9); put1(o, (unsigned)n); } /* < 256 bytes */
    put(o, s, n);
}
static void put_f64(Buf *o, double v) {
    uint64_t u; memcpy(&u, &v, 8); put1(o, 0xcb);
    for (int i = 7; i >= 0; i--) put1(o, (unsigned)(u >> (8 * i)) & 0xff);
}
static void put_int(Buf *o, unsigned v) { put1(o, v & 0x7f); }      /* 0..127 */

/* ---- MessagePack reading: a cursor over one message ---------------------------------------------------- */
typedef struct { const unsigned char *p, *end; int bad; } Cur;

static uint64_t be(Cur *c, int n) {
    uint64_t v = 0;
    if (c->end - c->p < n) { c->bad = 1; return 0; }
    for (int i = 0; i < n; i++) v = (v << 8) | *c->p++;
    return v;
}
/* Reads a map or array header: its count, or -1 if the next item is neither. */
static long rd_count(Cur *c, int map) {
    if (c->p >= c->end) { c->bad = 1; return -1; }
    unsigned t = *c->p;
    if (map && (t & 0xf0) == 0x80) { c->p++; return t & 0x0f; }
    if (!map && (t & 0xf0) == 0x90) { c->p++; return t & 0x0f; }
    if (t == (map ? 0xde : 0xdc)) { c->p++; return (long)be(c, 2); }
    if (t == (map ? 0xdf : 0xdd)) { c->p++; return (long)be(c, 4); }
    return -1;
}
/* Reads a string into out (truncated to cap-1); 0 if the next item is no string. */
static int rd_str(Cur *c, char *out, size_t cap) {
    if (c->p >= c->end) { c->bad = 1; return 0; }
    unsigned t = *c->p++; size_t n;
    if ((t & 0xe0) == 0xa0) n = t & 0x1f;
    else if (t == 0xd9) n = be(c, 1); else if (t == 0xda) n = be(c, 2); else if (t == 0xdb) n = be(c, 4);
    else { c->p--; return 0; }
    if ((size_t)(c->end - c->p) < n) { c->bad = 1; return 0; }
    size_t k = n < cap - 1 ? n : cap - 1;
    memcpy(out, c->p, k); out[k] = 0; c->p += n;
    return 1;
}
static void skip(Cur *c);
/* Reads any number as a double (NAN for nil or anything else, which is skipped). */
static double rd_num(Cur *c) {
    if (c->p >= c->end) { c->bad = 1; return NAN; }
    unsigned t = *c->p;
    if (t <= 0x7f) { c->p++; return t; }
    if (t >= 0xe0) { c->p++; return (int8_t)t; }
    if (t == 0xcb) { c->p++; uint64_t u = be(c, 8); double d; memcpy(&d, &u, 8); return d; }
    if (t == 0xca) { c->p++; uint32_t u = (uint32_t)be(c, 4); float f; memcpy(&f, &u, 4); return f; }
    if (t >= 0xcc && t <= 0xcf) { c->p++; return (double)be(c, 1 << (t - 0xcc)); }
    if (t >= 0xd0 && t <= 0xd3) {
        c->p++; int n = 1 << (t - 0xd0); uint64_t u = be(c, n);
        return n == 1 ? (int8_t)u : n == 2 ? (int16_t)u : n == 4 ? (int32_t)u : (double)(int64_t)u;
    }
    skip(c);
    return NAN;
}
static void skip(Cur *c) {
    if (c->p >= c->end) { c->bad = 1; return; }
    unsigned t = *c->p; long n;
    if (t <= 0x7f || t >= 0xe0 || t == 0xc0 || t == 0xc2 || t == 0xc3) { c->p++; return; }
    if ((t & 0xe0) == 0xa0 || (t >= 0xd9 && t <= 0xdb) || (t >= 0xc4 && t <= 0xc6)) {
        c->p++; size_t len = (t & 0xe0) == 0xa0 ? (t & 0x1f)
                           : be(c, t >= 0xd9 ? 1 << (t - 0xd9) : 1 << (t - 0xc4));
        if ((size_t)(c->end - c->p) < len) c->bad = 1; else c->p += len;
        return;
    }
    if ((n = rd_count(c, 1)) >= 0) { for (long i = 0; i < 2 * n && !c->bad; i++) skip(c); return; }
    if ((n = rd_count(c, 0)) >= 0) { for (long i = 0; i < n && !c->bad; i++) skip(c); return; }
    if ((t >= 0xca && t <= 0xd3)) { rd_num(c); return; }
    c->bad = 1;  /* ext types: SEAR sends none */
}

/* ---- frames ------------------------------------------------------------------------------------------- */
static int send_msg(int fd, Buf *o) {
    unsigned char len[4] = {(unsigned char)(o->n >> 24), (unsigned char)(o->n >> 16),
                            (unsigned char)(o->n >> 8), (unsigned char)o->n};
    return send(fd, len, 4, 0) == 4 && send(fd, o->b, o->n, 0) == (ssize_t)o->n ? 0 : -1;
}
static int read_all(int fd, unsigned char *p, size_t n) {
    while (n) { ssize_t k = recv(fd, p, n, 0); if (k <= 0) return -1; p += k; n -= (size_t)k; }
    return 0;
}
static unsigned char *recv_msg(int fd, size_t *n) {
    unsigned char len[4];
    if (read_all(fd, len, 4)) return NULL;
    *n = ((size_t)len[0] << 24) | ((size_t)len[1] << 16) | ((size_t)len[2] << 8) | len[3];
    unsigned char *body = malloc(*n ? *n : 1);
    if (!body || read_all(fd, body, *n)) { free(body); return NULL; }
    return body;
}

/* ---- the controller ------------------------------------------------------------------------------------ */
static const double ROUTE[4][2] = {{12, 0}, {12, 12}, {0, 12}, {0, 0}};  /* (east, north) m from the start */
#define CRUISE 1.5          /* m/s */
#define ARRIVED 1.5         /* m */
#define M_PER_DEG 111000.0
#define PI 3.14159265358979323846

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s PORT TOKEN\n", argv[0]); return 2; }
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr)) { perror("connect"); return 1; }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);

    Buf o = {.n = 0};
    put_map(&o, 4); put_str(&o, "t"); put_str(&o, "hello"); put_str(&o, "version"); put_int(&o, 1);
    put_str(&o, "token"); put_str(&o, argv[2]); put_str(&o, "name"); put_str(&o, "square.c");
    if (send_msg(fd, &o)) return 1;

    double lat = NAN, lon = NAN, lat0 = NAN, lon0 = NAN, heading = NAN, odo = NAN, last_odo = NAN;
    double speed = 0.0, now = 0.0, control_hz = 60.0;
    int corner = 0, reached = 0, fresh_fix = 0;
    for (;;) {
        size_t n; unsigned char *msg = recv_msg(fd, &n);
        if (!msg) { fprintf(stderr, "square: the simulation closed the connection\n"); return 1; }
        Cur c = {msg, msg + n, 0};
        char key[64], type[32] = "", name[64], err[256] = "";
        long entries = rd_count(&c, 1);
        for (long i = 0; i < entries && !c.bad; i++) {
            if (!rd_str(&c, key, sizeof key)) { c.bad = 1; break; }
            if (!strcmp(key, "t")) rd_str(&c, type, sizeof type);
            else if (!strcmp(key, "time")) now = rd_num(&c);
            else if (!strcmp(key, "control_hz")) control_hz = rd_num(&c);
            else if (!strcmp(key, "message")) rd_str(&c, err, sizeof err);
            else if (!strcmp(key, "readings")) {
                long count = rd_count(&c, 1);
                for (long r = 0; r < count && !c.bad; r++) {
                    rd_str(&c, name, sizeof name);
                    if (!strcmp(name, "compass")) { heading = rd_num(&c); continue; }
                    int gps = !strcmp(name, "gps"), od = !strcmp(name, "odometer");
                    long fields = (gps || od) ? rd_count(&c, 1) : -1;
                    if (fields < 0) { skip(&c); continue; }       /* other sensors, or nil */
                    for (long f = 0; f < fields && !c.bad; f++) {  /* {_type, fields, values, attrs} */
                        rd_str(&c, key, sizeof key);
                        if (strcmp(key, "values")) { skip(&c); continue; }
                        long k = rd_count(&c, 0);
                        for (long v = 0; v < k; v++) {
                            double x = rd_num(&c);
                            if (gps && v == 0) lat = x;
                            if (gps && v == 1) { lon = x; fresh_fix = 1; }
                            if (od && v == 0) odo = x;
                        }
                    }
                }
            } else skip(&c);
        }
        free(msg);
        if (c.bad) { fprintf(stderr, "square: a malformed message\n"); return 1; }
        if (!strcmp(type, "error")) { fprintf(stderr, "square: the simulation says: %s\n", err); return 1; }
        if (!strcmp(type, "welcome")) continue;
        if (!strcmp(type, "stop")) break;

        /* A turn (init, start or tick): decide, then send done with this tick's commands. */
        double steer = 0.0, force = 0.0;
        if (!isnan(lat) && !isnan(heading) && !isnan(odo)) {
            if (isnan(lat0)) { lat0 = lat; lon0 = lon; }
            if (!isnan(last_odo)) speed = 0.9 * speed + 0.1 * (odo - last_odo) * control_hz;
            last_odo = odo;
            double north = (lat - lat0) * M_PER_DEG, east = (lon - lon0) * M_PER_DEG * cos(lat0 * PI / 180);
            double de = ROUTE[corner][0] - east, dn = ROUTE[corner][1] - north;
            if (fresh_fix && hypot(de, dn) < ARRIVED) {
                printf("square: t=%.2f s reached corner %d (%.0f, %.0f)\n", now, ++reached, ROUTE[corner][0],
                       ROUTE[corner][1]);
                fflush(stdout);
                corner = (corner + 1) % 4;
            }
            fresh_fix = 0;
            double bearing = atan2(de, dn) * 180 / PI;                      /* clockwise from north */
            double error = fmod(bearing - heading + 540.0, 360.0) - 180.0;  /* + means to the right */
            steer = -error * PI / 180 * 1.2;                                /* + steers left */
            double wanted = CRUISE * (fabs(error) > 45 ? 0.5 : 1.0);
            force = fmax(-20.0, fmin(40.0, 60.0 * (wanted - speed)));
        }
        o.n = 0;
        put_map(&o, 2); put_str(&o, "t"); put_str(&o, "done"); put_str(&o, "calls");
        put_arr(&o, 3);
        put_arr(&o, 2); put_str(&o, "steer"); put_arr(&o, 1); put_f64(&o, steer);
        put_arr(&o, 2); put_str(&o, "accelerate"); put_arr(&o, 1); put_f64(&o, force);
        put_arr(&o, 2); put_str(&o, "brake"); put_arr(&o, 1); put_f64(&o, 0.0);
        if (send_msg(fd, &o)) return 1;
    }
    o.n = 0;
    put_map(&o, 1); put_str(&o, "t"); put_str(&o, "bye");
    send_msg(fd, &o);
    close(fd);
    printf("square: the simulation ended; %d corners reached\n", reached);
    return 0;
}
