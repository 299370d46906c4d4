package main

import (
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// problem is one link that does not resolve.
type problem struct {
	// file is the Markdown or Go file the link is in, line its line.
	file string
	line int
	// link is the link as written.
	link string
	why  string
}

func (p problem) String() string { return fmt.Sprintf("%s:%d: %s: %s", p.file, p.line, p.link, p.why) }

// checker resolves links against the files git tracks.
type checker struct {
	fsys  fs.FS
	files map[string]bool
	dirs  map[string]bool
	// docs caches the Markdown files read so far, by path.
	docs map[string]*markdown
}

// check reads every tracked Markdown file and every tracked Go file that is
// not a test, and returns each link in them that does not resolve: in the
// Markdown, every relative link and reference, and every link to this
// repository on GitHub; in the Go code, every link into this repository's
// docs that a string constant holds (docs/x.md#y, or its GitHub URL). A
// link must name a tracked file or directory, and its anchor a heading or an
// HTML anchor of the Markdown file it names (or a line of another file).
// Files under testdata/ are not read.
func check(fsys fs.FS, tracked []string) ([]problem, error) {
	c := &checker{fsys: fsys, files: map[string]bool{}, dirs: map[string]bool{".": true}, docs: map[string]*markdown{}}
	for _, f := range tracked {
		c.files[f] = true
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			c.dirs[d] = true
		}
	}
	var problems []problem
	var gofiles []string
	for _, f := range tracked {
		if slices.Contains(strings.Split(f, "/"), "testdata") {
			continue
		}
		switch {
		case isMarkdown(f):
			md, err := c.markdown(f)
			if err != nil {
				return nil, err
			}
			for _, l := range md.links {
				if why := c.resolve(f, l.dest); why != "" {
					problems = append(problems, problem{file: f, line: l.line, link: l.dest, why: why})
				}
			}
			for _, l := range md.undefined {
				problems = append(problems, problem{file: f, line: l.line, link: "[" + l.dest + "]",
					why: "no reference definition has this label"})
			}
		case strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, "_test.go"):
			gofiles = append(gofiles, f)
		}
	}
	refs, err := goDocLinks(fsys, gofiles)
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		// A reference in a message is relative to the repository root.
		if why := c.resolve("", r.link); why != "" {
			problems = append(problems, problem{file: r.file, line: r.line, link: r.link, why: why})
		}
	}
	sort.SliceStable(problems, func(i, j int) bool {
		if problems[i].file != problems[j].file {
			return problems[i].file < problems[j].file
		}
		return problems[i].line < problems[j].line
	})
	return problems, nil
}

func isMarkdown(name string) bool {
	ext := strings.ToLower(path.Ext(name))
	return ext == ".md" || ext == ".markdown"
}

func (c *checker) markdown(name string) (*markdown, error) {
	if md, ok := c.docs[name]; ok {
		return md, nil
	}
	src, err := fs.ReadFile(c.fsys, name)
	if err != nil {
		return nil, err
	}
	md := parseMarkdown(string(src))
	c.docs[name] = &md
	return &md, nil
}

// repoPrefix is this repository's files on GitHub, on the main branch.
var repoPrefix = regexp.MustCompile(`(?i)^https?://(?:www\.)?github\.com/ballast-sched/ballast/(?:blob|tree)/main(?:/|$)`)

// scheme starts an absolute URL (RFC 3986).
var scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// resolve checks the link dest written in the file from ("" for the root of
// the repository) and says what is wrong with it, or "" when it resolves or
// leaves the repository (such links are not followed).
func (c *checker) resolve(from, dest string) string {
	if strings.TrimSpace(dest) == "" {
		return "empty link"
	}
	rest, frag, hasFrag := strings.Cut(dest, "#")
	rootRelative := false
	switch {
	case repoPrefix.MatchString(rest):
		rest = repoPrefix.ReplaceAllString(rest, "")
		rootRelative = true
	case scheme.MatchString(rest), strings.HasPrefix(rest, "//"):
		return ""
	case strings.HasPrefix(rest, "/"):
		rootRelative = true
	}
	rest, query, _ := strings.Cut(rest, "?")
	p, err := url.PathUnescape(rest)
	if err != nil {
		return fmt.Sprintf("bad percent-encoding: %v", err)
	}
	var target string
	switch {
	case p == "" && !rootRelative && from != "":
		target = from
	case rootRelative || from == "":
		target = path.Clean("/" + p)[1:]
		if target == "" {
			target = "."
		}
	default:
		target = path.Join(path.Dir(from), p)
	}
	if target == ".." || strings.HasPrefix(target, "../") {
		return "points outside the repository"
	}
	isFile, isDir := c.files[target], c.dirs[target]
	if !isFile && !isDir {
		return fmt.Sprintf("%s: no such file or directory tracked by git", target)
	}
	if !hasFrag || frag == "" {
		return ""
	}
	anchor, err := url.PathUnescape(frag)
	if err != nil {
		anchor = frag
	}
	if isDir {
		// GitHub shows a directory's README below its listing.
		readme := ""
		for _, name := range []string{"README.md", "readme.md", "README.markdown", "README"} {
			if c.files[path.Join(target, name)] {
				readme = path.Join(target, name)
				break
			}
		}
		if readme == "" {
			return fmt.Sprintf("#%s: %s is a directory without a README", anchor, target)
		}
		target = readme
	}
	plain := slices.Contains(strings.Split(query, "&"), "plain=1")
	if isMarkdown(target) && !plain {
		md, err := c.markdown(target)
		if err != nil {
			return err.Error()
		}
		if md.anchors[anchor] {
			return ""
		}
		why := fmt.Sprintf("no heading or anchor #%s in %s", anchor, target)
		if near := nearest(anchor, md.anchors); near != "" {
			why += fmt.Sprintf(" (did you mean #%s?)", near)
		}
		return why
	}
	return c.lineAnchor(target, anchor)
}

// lineAnchor checks #L12 or #L12-L20 in a file GitHub shows as text.
func (c *checker) lineAnchor(target, anchor string) string {
	m := lineRange.FindStringSubmatch(anchor)
	if m == nil {
		return fmt.Sprintf("#%s: %s is not Markdown, and the anchor is not a line (#L12)", anchor, target)
	}
	src, err := fs.ReadFile(c.fsys, target)
	if err != nil {
		return err.Error()
	}
	lines := strings.Count(string(src), "\n")
	if len(src) > 0 && src[len(src)-1] != '\n' {
		lines++
	}
	for _, s := range m[1:] {
		if n, err := strconv.Atoi(s); err == nil && (n < 1 || n > lines) {
			return fmt.Sprintf("#%s: %s has %d lines", anchor, target, lines)
		}
	}
	return ""
}

var lineRange = regexp.MustCompile(`^L([0-9]+)(?:C[0-9]+)?(?:-L([0-9]+)(?:C[0-9]+)?)?$`)

// nearest returns the anchor of anchors most likely meant by a: the shortest
// that a heading grown longer gives (a followed by more words), or else the
// closest by edit distance, if close enough.
func nearest(a string, anchors map[string]bool) string {
	best := ""
	for cand := range anchors {
		if strings.HasPrefix(cand, a+"-") && (best == "" || len(cand) < len(best) || len(cand) == len(best) && cand < best) {
			best = cand
		}
	}
	if best != "" {
		return best
	}
	bestDist := len(a)/3 + 1
	for cand := range anchors {
		if d := distance(a, cand); d < bestDist || d == bestDist && best != "" && cand < best {
			best, bestDist = cand, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
