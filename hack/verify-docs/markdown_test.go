package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSlug(t *testing.T) {
	for _, tc := range []struct {
		name, heading, want string
	}{
		{name: "words", heading: "Running it", want: "running-it"},
		{name: "punctuation goes", heading: "LoadAware (PreFilter, Filter, Reserve)", want: "loadaware-prefilter-filter-reserve"},
		// The spaces around the dash stay, the dash goes.
		{name: "an em dash", heading: "UsageAwareFit — opt-in overcommit", want: "usageawarefit--opt-in-overcommit"},
		{name: "hyphens and underscores stay", heading: "re-run snake_case", want: "re-run-snake_case"},
		{name: "dots and slashes go", heading: "Profiles (scheduler/config/) 1.36", want: "profiles-schedulerconfig-136"},
		{name: "Unicode letters stay, lower-cased", heading: "Ünïcödé Straße", want: "ünïcödé-straße"},
		{name: "letters without case", heading: "日本語 見出し", want: "日本語-見出し"},
		{name: "symbols go", heading: "C++ & Go: 100% 🚀", want: "c--go-100-"},
		{name: "a symbol that is alphabetic stays", heading: "Ⓐ circled", want: "ⓐ-circled"},
		{name: "other numbers go", heading: "x² ½", want: "x-"},
		{name: "only a space becomes a hyphen", heading: "tab\there", want: "tabhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := slug(tc.heading); got != tc.want {
				t.Errorf("slug(%q) = %q, want %q", tc.heading, got, tc.want)
			}
		})
	}
}

func TestInlineText(t *testing.T) {
	for _, tc := range []struct {
		name, heading, want string
	}{
		{name: "code keeps its content", heading: "`GET /watcher?host=<node>`", want: "GET /watcher?host=<node>"},
		{name: "a link keeps its text", heading: "See [the *docs*](docs/a.md#x) now", want: "See the *docs* now"},
		{name: "a reference keeps its text", heading: "See [the docs][ref]", want: "See the docs"},
		{name: "an image renders no text", heading: "Logo ![alt text](logo.png) here", want: "Logo  here"},
		{name: "HTML tags render no text", heading: `Flags <a name="flags"></a>`, want: "Flags "},
		{name: "an autolink keeps its URL", heading: "<https://x.io/a>", want: "https://x.io/a"},
		{name: "emphasis with underscores", heading: "_Very_ __strong__ words", want: "Very strong words"},
		{name: "underscores inside words stay", heading: "max_skew and _private", want: "max_skew and _private"},
		{name: "an escaped underscore stays", heading: `\_x\_`, want: "_x_"},
		{name: "entities", heading: "Fish &amp; chips", want: "Fish & chips"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := inlineText(tc.heading); got != tc.want {
				t.Errorf("inlineText(%q) = %q, want %q", tc.heading, got, tc.want)
			}
		})
	}
}

func TestParseMarkdown(t *testing.T) {
	src := "# Title\n" + // 1
		"\n" +
		"## Args\n" + // 3
		"## Args\n" + // 4: args-1
		"## Args 1\n" + // 5: args-1 is taken: args-1-1
		"## Closed ##\n" + // 6
		"   ### `code_span` and [a link](x.md)\n" + // 7
		"\n" +
		"Setext\n" + // 9
		"heading\n" +
		"======\n" +
		"\n" +
		"- a list item\n" + // 13
		"---\n" + // a thematic break, not a heading
		"\n" +
		"```sh\n" + // 16
		"# not a heading\n" +
		"[not a link](fenced.md)\n" +
		"```\n" +
		"Text `[code](code.md)` and [inline](inline.md \"title\"), ![img](<img/a b.png>),\n" + // 20
		"[text\nover two lines](two.md) and [ref][Label] [collapsed][] [shortcut] [undefined][nope].\n" + // 21-22
		"<!-- [commented](comment.md) -->\n" +
		"<a name=\"custom\"></a> <div id='other'></div> <a href=\"html.md#h\">x</a>\n" + // 24
		"Bare https://github.com/ballast-sched/ballast/blob/main/docs/x.md#y. and [nested ![img](n.png)](outer.md)\n" + // 25
		"\n" +
		"[label]: ref.md#r\n" + // 27
		"  [collapsed]: <coll.md>\n" +
		"[shortcut]: short.md\n"
	md := parseMarkdown(src)

	wantAnchors := map[string]bool{
		"title": true, "args": true, "args-1": true, "args-1-1": true, "closed": true,
		"code_span-and-a-link": true, "setext\nheading": false, "setextheading": true,
		"custom": true, "other": true,
	}
	for a, want := range wantAnchors {
		if md.anchors[a] != want {
			t.Errorf("anchor %q: got %v, want %v", a, md.anchors[a], want)
		}
	}
	if len(md.anchors) != 9 {
		t.Errorf("anchors: got %v, want 9", md.anchors)
	}
	wantLinks := []link{
		{dest: "ref.md#r", line: 27},
		{dest: "coll.md", line: 28},
		{dest: "short.md", line: 29},
		{dest: "x.md", line: 7},
		{dest: "inline.md", line: 20},
		{dest: "img/a b.png", line: 20},
		{dest: "two.md", line: 22},
		{dest: "outer.md", line: 25},
		{dest: "n.png", line: 25},
		{dest: "html.md#h", line: 24},
		{dest: "https://github.com/ballast-sched/ballast/blob/main/docs/x.md#y", line: 25},
	}
	if diff := cmp.Diff(wantLinks, md.links, cmp.AllowUnexported(link{})); diff != "" {
		t.Errorf("links (-want,+got):\n%s", diff)
	}
	wantUndefined := []link{{dest: "nope", line: 22}}
	if diff := cmp.Diff(wantUndefined, md.undefined, cmp.AllowUnexported(link{})); diff != "" {
		t.Errorf("undefined references (-want,+got):\n%s", diff)
	}
}
