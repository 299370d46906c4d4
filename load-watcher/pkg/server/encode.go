package server

import (
	"encoding/json"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

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

// appendNodes appends `"name":fragment` pairs for names, building missing
// or outdated fragments (JSON objects) with encode. A non-nil header writes
// per-request fields: it must open the object and end with a comma, and
// the fragment's own opening brace is then skipped.
func (c *fragmentCache) appendNodes(b []byte, names []string, nodes map[string]usage.NodeUsage, kind string,
	encode func(usage.NodeUsage) ([]byte, error), header func([]byte, usage.NodeUsage) []byte) ([]byte, error) {
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
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, name)
		b = append(b, ':')
		if header != nil {
			b = header(b, n)
			b = append(b, f.body[1:]...)
		} else {
			b = append(b, f.body...)
		}
	}
	// Forget deleted nodes once the cache holds far more than is live.
	if len(c.m) > 8*len(nodes)+64 {
		for k := range c.m {
			if _, live := nodes[k.node]; !live {
				delete(c.m, k)
			}
		}
	}
	return b, nil
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

func marshal(v any) ([]byte, error) { return json.Marshal(v) }
