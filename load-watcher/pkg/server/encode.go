package server

import (
	"bufio"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
)

// fragmentCache keeps each node's encoded statistics until the node gets a
// new sample. Statistics only change with a new sample, so a request at
// 5 000 nodes copies cached bytes instead of formatting ~150 000 floats.
type fragmentCache struct {
	mu sync.Mutex
	m  map[fragmentKey]fragment
}

type fragmentKey struct {
	node string
	kind string // which encoding: compat window or usage window filter
}

type fragment struct {
	sampleTime time.Time
	body       []byte
}

func newFragmentCache() *fragmentCache {
	return &fragmentCache{m: map[fragmentKey]fragment{}}
}

// bodies returns the fragment (a JSON object) of every name, building
// missing or outdated ones with encode. Fragments are never modified once
// built, so callers may write them out after the lock is released.
func (c *fragmentCache) bodies(names []string, nodes map[string]usage.NodeUsage, kind string,
	encode func(usage.NodeUsage) ([]byte, error)) ([][]byte, error) {
	out := make([][]byte, len(names))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, name := range names {
		n := nodes[name]
		key := fragmentKey{node: name, kind: kind}
		f, ok := c.m[key]
		if !ok || !f.sampleTime.Equal(n.SampleTime) {
			body, err := encode(n)
			if err != nil {
				return nil, err
			}
			f = fragment{sampleTime: n.SampleTime, body: body}
			c.m[key] = f
		}
		out[i] = f.body
	}
	c.trimLocked(nodes)
	return out, nil
}

// trimLocked forgets deleted nodes once the cache holds far more entries
// than there are live nodes.
func (c *fragmentCache) trimLocked(nodes map[string]usage.NodeUsage) {
	if len(c.m) <= 8*len(nodes)+64 {
		return
	}
	for k := range c.m {
		if _, live := nodes[k.node]; !live {
			delete(c.m, k)
		}
	}
}

// streamWriter writes a JSON answer in pieces through a pooled buffer, so
// a 5 000-node answer never sits in memory whole.
type streamWriter struct {
	bw      *bufio.Writer
	scratch []byte
}

var streamPool = sync.Pool{New: func() any {
	return &streamWriter{bw: bufio.NewWriterSize(nil, 32<<10), scratch: make([]byte, 0, 512)}
}}

// startStream sends the 200 headers and returns a writer for the body;
// finish it with end.
func startStream(w http.ResponseWriter) *streamWriter {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	sw := streamPool.Get().(*streamWriter)
	sw.bw.Reset(w)
	return sw
}

// write sends b; a failed write (client gone) is remembered by bufio and
// makes the rest no-ops.
func (sw *streamWriter) write(b []byte) { _, _ = sw.bw.Write(b) }

// nodes writes `"name":fragment` pairs. A non-nil header writes per-request
// fields into scratch: it must open the object and end with a comma, and
// the fragment's own opening brace is then skipped.
func (sw *streamWriter) nodes(names []string, bodies [][]byte, nodes map[string]usage.NodeUsage, header func([]byte, usage.NodeUsage) []byte) {
	for i, name := range names {
		b := sw.scratch[:0]
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, name)
		b = append(b, ':')
		body := bodies[i]
		if header != nil {
			b = header(b, nodes[name])
			body = body[1:]
		}
		sw.write(b)
		sw.write(body)
		sw.scratch = b
	}
}

// end flushes the body and returns the writer to the pool.
func (sw *streamWriter) end() {
	if err := sw.bw.Flush(); err != nil {
		klog.V(4).InfoS("Writing a response failed", "err", err)
	}
	sw.bw.Reset(nil)
	streamPool.Put(sw)
}

// refresh encodes the fragments of names that are missing or outdated,
// outside the lock so concurrent requests are not held up.
func (c *fragmentCache) refresh(names []string, nodes map[string]usage.NodeUsage, kind string, encode func(usage.NodeUsage) ([]byte, error)) {
	var todo []string
	c.mu.Lock()
	for _, name := range names {
		f, ok := c.m[fragmentKey{node: name, kind: kind}]
		if !ok || !f.sampleTime.Equal(nodes[name].SampleTime) {
			todo = append(todo, name)
		}
	}
	c.trimLocked(nodes)
	c.mu.Unlock()
	if len(todo) == 0 {
		return
	}
	built := make([]fragment, 0, len(todo))
	for _, name := range todo {
		n := nodes[name]
		body, err := encode(n)
		if err != nil {
			return
		}
		built = append(built, fragment{sampleTime: n.SampleTime, body: body})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, name := range todo {
		c.m[fragmentKey{node: name, kind: kind}] = built[i]
	}
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
			i++
		case c < 0x20:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
			i++
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
		}
	}
	return append(b, '"')
}

func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

func appendSeconds(b []byte, d time.Duration) []byte {
	return strconv.AppendFloat(b, d.Seconds(), 'f', -1, 64)
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendPercent appends v rounded to three decimals, trailing zeros
// trimmed: a thousandth of a percent is far below any source's precision,
// and fixed-point formatting is several times faster than shortest-float
// formatting, which dominates encoding 5 000 nodes. Non-finite values
// cannot reach here (the collector drops them); they are written as 0 to
// keep the JSON valid regardless.
func appendPercent(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return append(b, '0')
	case math.Abs(v) >= 1e15:
		return strconv.AppendFloat(b, v, 'f', 0, 64)
	}
	n := int64(math.Round(v * 1000))
	if n < 0 {
		b = append(b, '-')
		n = -n
	}
	b = strconv.AppendInt(b, n/1000, 10)
	frac := n % 1000
	if frac == 0 {
		return b
	}
	b = append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	for b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	return b
}
