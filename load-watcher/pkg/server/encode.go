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
)

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

// end flushes the body and returns the writer to the pool.
func (sw *streamWriter) end() {
	if err := sw.bw.Flush(); err != nil {
		klog.V(4).InfoS("Writing a response failed", "err", err)
	}
	sw.bw.Reset(nil)
	streamPool.Put(sw)
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
