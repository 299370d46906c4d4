package main

import (
	"fmt"
	"html"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// link is one link found in a file: its destination as written and the line
// it starts on.
type link struct {
	dest string
	line int
}

// markdown is what the check needs of one Markdown file: the links it holds
// and the anchors it offers.
type markdown struct {
	// links are the destinations of inline links and images, of reference
	// definitions, of HTML href and src attributes, and the URLs of this
	// repository written bare in the text (GitHub links them).
	links []link
	// undefined are the references ([text][label], [label][]) whose label
	// no definition names: GitHub prints them as text.
	undefined []link
	// anchors are the ids of the headings, by GitHub's rules, and those
	// of HTML elements (<a name="x">, id="x").
	anchors map[string]bool
}

// parseMarkdown reads a Markdown file the way GitHub renders it, as far as
// links and anchors go. Fenced code blocks, code spans and HTML comments hold
// no links and no headings. Indented code blocks are read as text: in these
// docs an indented line continues a list item far more often than it is code.
func parseMarkdown(src string) markdown {
	md := markdown{anchors: map[string]bool{}}
	text, headings := blankFences(src)
	slugs := slugger{}
	for _, h := range headings {
		md.anchors[slugs.add(inlineText(h))] = true
	}
	text = blankCodeSpans(text)
	text = blankComments(text)
	for _, m := range htmlID.FindAllStringSubmatch(text, -1) {
		md.anchors[html.UnescapeString(firstNonEmpty(m[1:]))] = true
	}

	// at records every destination found by its offset, so that a bare
	// URL is not taken twice.
	at := map[int]bool{}
	add := func(offset int, dest string) {
		at[offset] = true
		md.links = append(md.links, link{dest: dest, line: lineOf(text, offset)})
	}
	defs := map[string]bool{}
	for _, m := range refDefinition.FindAllStringSubmatchIndex(text, -1) {
		label := text[m[2]:m[3]]
		if strings.HasPrefix(label, "^") { // a footnote
			continue
		}
		defs[normalizeLabel(label)] = true
		dest := text[m[4]:m[5]]
		if strings.HasPrefix(dest, "<") {
			dest = dest[1 : len(dest)-1]
		}
		add(m[4], unescape(dest))
		// The definition is not a shortcut reference for the scan below.
		text = text[:m[0]] + blank(text[m[0]:m[1]]) + text[m[1]:]
	}
	scanLinks(text, 0, len(text), defs, add, func(offset int, label string) {
		md.undefined = append(md.undefined, link{dest: label, line: lineOf(text, offset)})
	})
	for _, m := range htmlLink.FindAllStringSubmatchIndex(text, -1) {
		for g := 2; g < len(m); g += 2 {
			if m[g] >= 0 {
				add(m[g], html.UnescapeString(text[m[g]:m[g+1]]))
				break
			}
		}
	}
	for _, m := range repoURL.FindAllStringIndex(text, -1) {
		if !at[m[0]] {
			add(m[0], strings.TrimRight(text[m[0]:m[1]], ".,:;!?*_~'\""))
		}
	}
	return md
}

var (
	// refDefinition is a link reference definition: [label]: destination.
	refDefinition = regexp.MustCompile(`(?m)^ {0,3}\[((?:[^\]\\\n]|\\.)+)\]:[ \t]*\n?[ \t]*(<[^>\n]*>|\S+)`)
	// htmlLink is the destination of an HTML link or image.
	htmlLink = regexp.MustCompile(`(?i)<(?:a|img|source|link)(?:\s[^>]*?)?\s(?:href|src)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))`)
	// htmlID is an anchor an HTML element sets: <a name="x">, <p id="x">.
	htmlID = regexp.MustCompile(`(?i)<[a-z][a-z0-9-]*(?:\s[^>]*?)?\s(?:id|name)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))`)
	// repoURL is a link to a file or directory of this repository on
	// GitHub, on the main branch; it is checked as if it were relative.
	repoURL = regexp.MustCompile("(?i)https?://(?:www\\.)?github\\.com/ballast-sched/ballast/(?:blob|tree)/main(?:[/?#][^\\s<>()\\[\\]{}\"'`]*)?")
)

// blankFences returns src with the content of its fenced code blocks (fences
// included) replaced by spaces, lines kept, and the text of its headings in
// order: ATX headings (# Title) and setext headings (Title, then === or ---).
func blankFences(src string) (string, []string) {
	lines := strings.SplitAfter(src, "\n")
	var b strings.Builder
	var headings []string
	var fence string  // the opening fence of the block we are in, or ""
	var para []string // the lines of the paragraph so far, for setext headings
	blocked := false  // in a list, quote, table or HTML block: no setext heading till a blank line
	for _, line := range lines {
		body := strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimLeft(body, " \t")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" \t") == "" {
				fence = ""
			}
			b.WriteString(blank(line))
			continue
		}
		if f := openingFence(trimmed); f != "" {
			fence = f
			para = nil
			b.WriteString(blank(line))
			continue
		}
		b.WriteString(line)
		h := atxHeading(body)
		switch {
		case strings.TrimSpace(body) == "":
			para, blocked = nil, false
		case h != nil:
			headings = append(headings, *h)
			para = nil
		case len(para) > 0 && setextUnderline.MatchString(body):
			headings = append(headings, strings.TrimSpace(strings.Join(para, "\n")))
			para = nil
		case !blocked && paragraphLine(body):
			para = append(para, strings.TrimSpace(body))
		default:
			para, blocked = nil, true
		}
	}
	return b.String(), headings
}

// openingFence returns the fence a line opens (``` or ~~~, as long as it is
// written), or "".
func openingFence(trimmed string) string {
	for _, c := range []string{"`", "~"} {
		n := len(trimmed) - len(strings.TrimLeft(trimmed, c))
		if n >= 3 && (c == "~" || !strings.Contains(trimmed[n:], "`")) {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// atxHeading returns the text of an ATX heading, or nil.
func atxHeading(line string) *string {
	s := strings.TrimLeft(line, " ")
	if len(line)-len(s) > 3 {
		return nil
	}
	n := len(s) - len(strings.TrimLeft(s, "#"))
	if n < 1 || n > 6 || (len(s) > n && s[n] != ' ' && s[n] != '\t') {
		return nil
	}
	text := strings.Trim(s[n:], " \t")
	// A closing sequence of #s goes, when a space precedes it.
	if closing := strings.TrimRight(text, "#"); closing == "" {
		text = ""
	} else if closing != text && (strings.HasSuffix(closing, " ") || strings.HasSuffix(closing, "\t")) {
		text = strings.TrimRight(closing, " \t")
	}
	return &text
}

var setextUnderline = regexp.MustCompile(`^ {0,3}(?:=+|-+)[ \t]*$`)

// paragraphLine reports whether a line may be part of a paragraph that a
// setext underline turns into a heading: not a list item, quote, table row,
// HTML or thematic break.
func paragraphLine(line string) bool {
	s := strings.TrimLeft(line, " ")
	if len(line)-len(s) > 3 {
		return false
	}
	return !blockStart.MatchString(s) && !strings.Contains(s, "|")
}

var blockStart = regexp.MustCompile(`^(?:[-*+](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|>|<|(?:[-*_][ \t]*){3,}$)`)

// blank replaces every byte of s but line ends by a space, so offsets and
// line numbers stay.
func blank(s string) string {
	b := []byte(s)
	blankBytes(b, 0, len(b))
	return string(b)
}

// blankBytes blanks s[from:to] in place.
func blankBytes(s []byte, from, to int) {
	for i := from; i < to; i++ {
		if s[i] != '\n' && s[i] != '\r' {
			s[i] = ' '
		}
	}
}

// blankCodeSpans blanks every code span: a run of backticks up to the next
// run of the same length, within a paragraph.
func blankCodeSpans(text string) string {
	s := []byte(text)
	for i := 0; i < len(text); {
		switch text[i] {
		case '\\':
			i += 2
			continue
		case '`':
		default:
			i++
			continue
		}
		n := runLength(text, i, '`')
		if end := closingRun(text, i+n, n); end >= 0 {
			blankBytes(s, i, end)
			i = end
		} else {
			i += n
		}
	}
	return string(s)
}

// closingRun returns the end of the first run of exactly n backticks from
// i on that comes before a blank line, or -1.
func closingRun(s string, i, n int) int {
	for i < len(s) {
		switch {
		case s[i] == '`':
			m := runLength(s, i, '`')
			if m == n {
				return i + m
			}
			i += m
		case s[i] == '\n' && blankLineAfter(s, i):
			return -1
		default:
			i++
		}
	}
	return -1
}

func runLength(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

// blankLineAfter reports whether the line after the newline at i is blank.
func blankLineAfter(s string, i int) bool {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case ' ', '\t', '\r':
		case '\n':
			return true
		default:
			return false
		}
	}
	return true
}

// blankComments blanks HTML comments.
func blankComments(text string) string {
	s := []byte(text)
	for i := 0; ; {
		start := strings.Index(text[i:], "<!--")
		if start < 0 {
			break
		}
		start += i
		end := strings.Index(text[start+4:], "-->")
		if end < 0 {
			end = len(text)
		} else {
			end += start + 4 + 3
		}
		blankBytes(s, start, end)
		i = end
	}
	return string(s)
}

// scanLinks finds the inline links and images of text[from:to] (code already
// blanked) and the references whose label defs does not hold.
func scanLinks(text string, from, to int, defs map[string]bool, found func(int, string), undefined func(int, string)) {
	for i := from; i < to; {
		switch text[i] {
		case '\\':
			i += 2
			continue
		case '[':
		default:
			i++
			continue
		}
		rb := matchingBracket(text, i, to)
		if rb < 0 {
			i++
			continue
		}
		label := text[i+1 : rb]
		switch {
		case rb+1 < to && text[rb+1] == '(':
			if destFrom, dest, end, ok := inlineDestination(text, rb+2, to); ok {
				found(destFrom, dest)
				scanLinks(text, i+1, rb, defs, found, undefined)
				i = end
				continue
			}
		case rb+1 < to && text[rb+1] == '[':
			if end := matchingBracket(text, rb+1, to); end > 0 && !strings.Contains(text[rb+2:end], "[") {
				ref := text[rb+2 : end]
				if strings.TrimSpace(ref) == "" {
					ref = label
				}
				if !strings.HasPrefix(ref, "^") && !defs[normalizeLabel(ref)] {
					undefined(i, ref)
				}
				scanLinks(text, i+1, rb, defs, found, undefined)
				i = end + 1
				continue
			}
		}
		i++
	}
}

// matchingBracket returns the index of the ] that closes the [ at open,
// before to and before a blank line, or -1.
func matchingBracket(text string, open, to int) int {
	depth := 0
	for i := open; i < to; i++ {
		switch text[i] {
		case '\\':
			i++
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return i
			}
		case '\n':
			if blankLineAfter(text[:to], i) {
				return -1
			}
		}
	}
	return -1
}

// inlineDestination reads the destination and optional title of an inline
// link from i (just after its opening parenthesis) on. It returns where the
// destination starts, the destination unescaped, and the index after the
// closing parenthesis; ok is false when this is not a link after all.
func inlineDestination(text string, i, to int) (destFrom int, dest string, end int, ok bool) {
	i = skipSpace(text, i, to)
	destFrom = i
	if i < to && text[i] == '<' {
		j := strings.IndexAny(text[i+1:to], ">\n")
		if j < 0 || text[i+1+j] != '>' {
			return 0, "", 0, false
		}
		dest = text[i+1 : i+1+j]
		i += j + 2
	} else {
		depth := 0
	loop:
		for ; i < to; i++ {
			switch c := text[i]; {
			case c == '\\' && i+1 < to:
				i++
			case c == '(':
				depth++
			case c == ')':
				if depth == 0 {
					break loop
				}
				depth--
			case c <= ' ':
				break loop
			}
		}
		dest = text[destFrom:i]
	}
	i = skipSpace(text, i, to)
	if i < to && (text[i] == '"' || text[i] == '\'' || text[i] == '(') {
		closer := text[i]
		if closer == '(' {
			closer = ')'
		}
		j := strings.IndexByte(text[i+1:to], closer)
		if j < 0 {
			return 0, "", 0, false
		}
		i = skipSpace(text, i+1+j+1, to)
	}
	if i >= to || text[i] != ')' {
		return 0, "", 0, false
	}
	return destFrom, unescape(dest), i + 1, true
}

// skipSpace skips spaces, tabs and at most one line end.
func skipSpace(text string, i, to int) int {
	newline := false
	for ; i < to; i++ {
		switch text[i] {
		case ' ', '\t', '\r':
		case '\n':
			if newline {
				return i
			}
			newline = true
		default:
			return i
		}
	}
	return i
}

// unescape resolves backslash escapes and character references, as
// CommonMark does in a link destination.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]) {
			i++
		}
		b.WriteByte(s[i])
	}
	return html.UnescapeString(b.String())
}

// isASCIIPunct reports whether a backslash escapes c.
func isASCIIPunct(c byte) bool { return strings.IndexByte(asciiPunct, c) >= 0 }

const asciiPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// normalizeLabel is how CommonMark matches a reference with its definition:
// case-folded, inner whitespace collapsed.
func normalizeLabel(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// lineOf returns the 1-based line of the byte at offset.
func lineOf(text string, offset int) int { return 1 + strings.Count(text[:offset], "\n") }

func firstNonEmpty(ss []string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// inlineText is the text GitHub renders for a heading's inline Markdown,
// from which it makes the anchor: code spans keep their content, links their
// text; images, HTML tags and the delimiters of emphasis render no text.
func inlineText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]):
			b.WriteByte(s[i+1])
			i += 2
		case c == '`':
			n := runLength(s, i, '`')
			end := closingRun(s, i+n, n)
			if end < 0 {
				b.WriteString(s[i : i+n])
				i += n
				continue
			}
			code := strings.ReplaceAll(s[i+n:end-n], "\n", " ")
			if len(code) >= 2 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.Trim(code, " ") != "" {
				code = code[1 : len(code)-1]
			}
			b.WriteString(code)
			i = end
		case c == '!' && i+1 < len(s) && s[i+1] == '[':
			if rb := matchingBracket(s, i+1, len(s)); rb > 0 {
				if end := linkEnd(s, rb); end > 0 {
					i = end // an image renders no text
					continue
				}
			}
			b.WriteByte(c)
			i++
		case c == '[':
			if rb := matchingBracket(s, i, len(s)); rb > 0 {
				if end := linkEnd(s, rb); end > 0 {
					b.WriteString(inlineText(s[i+1 : rb]))
					i = end
					continue
				}
			}
			b.WriteByte(c)
			i++
		case c == '<':
			if m := autolink.FindString(s[i:]); m != "" {
				b.WriteString(m[1 : len(m)-1])
				i += len(m)
			} else if m := htmlTag.FindString(s[i:]); m != "" {
				i += len(m)
			} else {
				b.WriteByte(c)
				i++
			}
		case c == '&':
			if m := entity.FindString(s[i:]); m != "" {
				b.WriteString(html.UnescapeString(m))
				i += len(m)
			} else {
				b.WriteByte(c)
				i++
			}
		case c == '_':
			n := runLength(s, i, '_')
			b.WriteString(strings.Repeat(string(underscoreMark(s, i, n)), n))
			i += n
		default:
			b.WriteByte(c)
			i++
		}
	}
	return pairUnderscores(b.String())
}

// linkEnd returns the index after the destination or reference that follows
// the ] at close, or -1 when none does.
func linkEnd(s string, rb int) int {
	if rb+1 >= len(s) {
		return -1
	}
	switch s[rb+1] {
	case '(':
		if _, _, end, ok := inlineDestination(s, rb+2, len(s)); ok {
			return end
		}
	case '[':
		if end := matchingBracket(s, rb+1, len(s)); end > 0 {
			return end + 1
		}
	}
	return -1
}

var (
	autolink = regexp.MustCompile(`^<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>`)
	htmlTag  = regexp.MustCompile(`^</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>`)
	entity   = regexp.MustCompile(`^&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});`)
)

// An underscore run of a heading is marked, while its text is built, with a
// private-use rune saying whether it may open emphasis, close it, both or
// neither (CommonMark's flanking rules for _); pairUnderscores then drops the
// runs that pair up and keeps the others as underscores.
const (
	markLiteral = '\uE000' + iota
	markOpen
	markClose
	markBoth
)

func underscoreMark(s string, i, n int) rune {
	before, _ := utf8.DecodeLastRuneInString(s[:i])
	after, _ := utf8.DecodeRuneInString(s[i+n:])
	if i == 0 {
		before = ' '
	}
	if i+n == len(s) {
		after = ' '
	}
	space := func(r rune) bool { return unicode.IsSpace(r) }
	punct := func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) }
	left := !space(after) && (!punct(after) || space(before) || punct(before))
	right := !space(before) && (!punct(before) || space(after) || punct(after))
	// For _, a run inside a word neither opens nor closes.
	open := left && (!right || punct(before))
	closes := right && (!left || punct(after))
	switch {
	case open && closes:
		return markBoth
	case open:
		return markOpen
	case closes:
		return markClose
	}
	return markLiteral
}

func pairUnderscores(s string) string {
	type run struct{ from, to int } // byte offsets in s
	var runs []run
	var marks []rune
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r < markLiteral || r > markBoth {
			i += size
			continue
		}
		j := i
		for j < len(s) {
			r2, size2 := utf8.DecodeRuneInString(s[j:])
			if r2 != r {
				break
			}
			j += size2
		}
		runs = append(runs, run{i, j})
		marks = append(marks, r)
		i = j
	}
	drop := make([]bool, len(runs))
	var openers []int
	for k, m := range marks {
		if (m == markClose || m == markBoth) && len(openers) > 0 {
			drop[openers[len(openers)-1]], drop[k] = true, true
			openers = openers[:len(openers)-1]
			continue
		}
		if m == markOpen || m == markBoth {
			openers = append(openers, k)
		}
	}
	var b strings.Builder
	last := 0
	for k, r := range runs {
		b.WriteString(s[last:r.from])
		if !drop[k] {
			b.WriteString(strings.Repeat("_", utf8.RuneCountInString(s[r.from:r.to])))
		}
		last = r.to
	}
	b.WriteString(s[last:])
	return b.String()
}

// slug is GitHub's anchor for a heading's text (github-slugger): lower case,
// every character dropped but letters, marks, decimal and letter numbers,
// connector punctuation (_), hyphens and spaces, and each space made a hyphen.
func slug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || unicode.In(r, unicode.L, unicode.M, unicode.Nd, unicode.Nl, unicode.Pc, unicode.Other_Alphabetic):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// slugger hands out the anchors of one document: a heading whose slug is
// taken already gets -1, -2, … appended, the first suffix free.
type slugger map[string]int

func (s slugger) add(text string) string {
	base := slug(text)
	id := base
	for {
		if _, taken := s[id]; !taken {
			break
		}
		s[base]++
		id = fmt.Sprintf("%s-%d", base, s[base])
	}
	s[id] = 0
	return id
}
