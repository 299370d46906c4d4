package server

import (
	"strconv"
	"time"
	"weak"

	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
)

// answers is one round of /api/v1/usage, encoded once when the round is
// published: every node's quoted name and statistics, in the round's
// order, in one buffer. A request copies these bytes and adds only what
// changes with the clock, each node's sample age and stale flag.
//
// Per node the buffer holds
//
//	"name":"sampleTime":"…","windows":{"1m":{…},"5m":{…},"15m":{…}}}
//	^      ^                          ^        ^        ^         ^
//	name   body                       windows  end 1m   end 5m    end 15m
//
// The statistics object lacks its opening brace: the request writes
// `{"sampleAgeSeconds":…,"stale":…,` in its place. at holds these offsets
// for every node (stride of them), so that an answer for one window is cut
// from the same bytes.
type answers struct {
	// nodes are the round's names and sample times; holding them rather
	// than the round lets its statistics go once the next round is out.
	nodes  *collector.Roster
	from   weak.Pointer[collector.Round]
	buf    []byte
	at     []uint32 // offsets into buf; buf stays far below 4 GiB (~1 KiB per node)
	stride int
}

// Offsets of a node within answers.at, before the window ends.
const (
	atName = iota
	atBody
	atWindows
	atEnds
)

// encodeAnswers encodes r for windows (sorted, named by windowNames). Nodes
// whose statistics have not changed since prev are copied from it.
func encodeAnswers(r *collector.Round, prev *answers, windows []usage.Window, windowNames []string) *answers {
	a := &answers{nodes: r.Roster, from: weak.Make(r), stride: atEnds + len(windows)}
	a.at = make([]uint32, 0, r.Len()*a.stride)
	size := r.Len() * (64 + 192*len(windows)) // a guess for the first round
	if prev != nil {
		size = len(prev.buf) + len(prev.buf)/32
	}
	a.buf = make([]byte, 0, size)
	for i := range r.Len() {
		if j, ok := prev.unchanged(r, i); ok {
			a.copyNode(prev, j)
		} else {
			a.appendNode(r, i, windows, windowNames)
		}
	}
	if cap(a.buf) > len(a.buf)+len(a.buf)/16 { // guessed too much, or grown by append: give the slack back
		a.buf = append(make([]byte, 0, len(a.buf)), a.buf...)
	}
	return a
}

// unchanged returns node i of r's index in a when a holds its current
// statistics. A zero version is unknown and never matches.
func (a *answers) unchanged(r *collector.Round, i int) (int, bool) {
	if a == nil || r.Version(i) == 0 {
		return 0, false
	}
	j, name := i, r.Name(i)
	if j >= a.nodes.Len() || a.nodes.Name(j) != name {
		var ok bool
		if j, ok = a.nodes.Find(name); !ok {
			return 0, false
		}
	}
	return j, a.nodes.Version(j) == r.Version(i)
}

func (a *answers) appendNode(r *collector.Round, i int, windows []usage.Window, windowNames []string) {
	a.at = append(a.at, uint32(len(a.buf)))
	a.buf = appendString(a.buf, r.Name(i))
	a.buf = append(a.buf, ':')
	a.at = append(a.at, uint32(len(a.buf)))
	a.buf = append(a.buf, `"sampleTime":`...)
	a.buf = appendTime(a.buf, r.SampleTime(i))
	a.buf = append(a.buf, `,"windows":{`...)
	a.at = append(a.at, uint32(len(a.buf)))
	for k, w := range windows {
		if k > 0 {
			a.buf = append(a.buf, ',')
		}
		a.buf = appendString(a.buf, windowNames[k])
		a.buf = append(a.buf, ":{"...)
		first := true
		for _, res := range usage.Resources {
			st, ok := r.Stats(i, w, res)
			if !ok {
				continue
			}
			if !first {
				a.buf = append(a.buf, ',')
			}
			first = false
			a.buf = appendString(a.buf, string(res))
			a.buf = appendStats(a.buf, st)
		}
		a.buf = append(a.buf, '}')
		a.at = append(a.at, uint32(len(a.buf)))
	}
	a.buf = append(a.buf, "}}"...)
}

// copyNode appends node j of from, whose bytes are still current.
func (a *answers) copyNode(from *answers, j int) {
	at := from.at[j*from.stride : (j+1)*from.stride]
	start, end := at[atName], from.end(j)
	shift := uint32(len(a.buf)) - start
	for _, o := range at {
		a.at = append(a.at, o+shift)
	}
	a.buf = append(a.buf, from.buf[start:end]...)
}

// end is the offset just past node i.
func (a *answers) end(i int) uint32 {
	return a.at[(i+1)*a.stride-1] + uint32(len("}}"))
}

// writeNode writes node i as a member of the "nodes" object, preceded by a
// comma unless first: every window when wi < 0, else only window wi.
func (a *answers) writeNode(sw *streamWriter, i, wi int, first bool, now time.Time) {
	at := a.at[i*a.stride : (i+1)*a.stride]
	b := sw.scratch[:0]
	if !first {
		b = append(b, ',')
	}
	b = append(b, a.buf[at[atName]:at[atBody]]...)
	b = append(b, `{"sampleAgeSeconds":`...)
	b = appendSeconds(b, max(0, now.Sub(a.nodes.SampleTime(i))).Round(time.Millisecond))
	b = append(b, `,"stale":`...)
	b = strconv.AppendBool(b, a.nodes.Stale(i, now))
	b = append(b, ',')
	if wi < 0 {
		sw.write(b)
		sw.write(a.buf[at[atBody]:a.end(i)])
	} else {
		start := at[atWindows]
		if wi > 0 {
			start = at[atEnds+wi-1] + uint32(len(","))
		}
		b = append(b, a.buf[at[atBody]:at[atWindows]]...)
		b = append(b, a.buf[start:at[atEnds+wi]]...)
		b = append(b, "}}"...)
		sw.write(b)
	}
	sw.scratch = b
}
