package main

import (
	"os"
	"slices"
	"sort"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// tree lays out the files of a repository, every one tracked by git but
// those listed in untracked.
func tree(files map[string]string, untracked ...string) (fstest.MapFS, []string) {
	fsys := fstest.MapFS{}
	var tracked []string
	for name, src := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(src)}
		if !slices.Contains(untracked, name) {
			tracked = append(tracked, name)
		}
	}
	sort.Strings(tracked)
	return fsys, tracked
}

// found is what a test pins of a problem: where, and which link; not the
// wording.
type found struct {
	File string
	Line int
	Link string
}

// docs is a small set of documentation that every case starts from.
func docs() map[string]string {
	return map[string]string{
		"docs/a.md":       "# Page A\n\n## Args\n\n## Args\n\n## Über uns\n\n<a name=\"custom\"></a>\n\nBack to [the top](../README.md#top).\n",
		"core/x.go":       "package core\n\nconst x = 1\n",
		"core/README.md":  "# Core\n\n## Layout\n",
		"images/logo.png": "PNG",
		"README.md":       "# Top\n",
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name      string
		files     map[string]string
		untracked []string
		want      []found
	}{
		{
			name: "every kind of link resolves",
			files: map[string]string{
				"README.md": "# Top\n\n## Local heading\n\n" +
					"[a](docs/a.md) [a](./docs/a.md#args) [second Args](docs/a.md#args-1) [dir](docs/) [core](core)\n" +
					"[here](#local-heading) [html anchor](docs/a.md#custom) [root-relative](/docs/a.md) ![logo](images/logo.png)\n" +
					"[ref][a-ref] [collapsed][] [escaped](docs/a%2Emd) [Unicode](docs/a.md#%C3%BCber-uns) [Unicode](docs/a.md#über-uns)\n" +
					"[a line](core/x.go#L3) [lines](core/x.go#L1-L3) [plain](docs/a.md?plain=1#L2) [a directory's README](core#layout)\n" +
					"On GitHub: https://github.com/ballast-sched/ballast/blob/main/docs/a.md#args and\n" +
					"[the tree](https://github.com/ballast-sched/ballast/tree/main/core), <a href=\"docs/a.md#page-a\">A</a>.\n" +
					"Elsewhere: [x](https://example.com/missing.md#nope) [mail](mailto:a@b.c) https://github.com/ballast-sched/ballast/releases/latest\n" +
					"Code is not read: `[x](missing.md)`, and\n\n```md\n[x](missing.md#nope)\n```\n\n" +
					"[a-ref]: docs/a.md#custom\n[collapsed]: https://github.com/ballast-sched/ballast/blob/main/README.md#local-heading\n",
				"installer/msg.go": "package installer\n\nimport \"fmt\"\n\n" +
					"const guide = \"docs/a.md\"\n\n" +
					"func hint() { fmt.Println(\"see \" + guide + \"#args\", \"(https://github.com/ballast-sched/ballast/blob/main/docs/a.md#page-a).\") }\n",
				// Tests and testdata are not the CLI's messages.
				"installer/msg_test.go":     "package installer\n\nconst broken = \"docs/a.md#nope\"\n",
				"installer/testdata/x.md":   "[broken](nope.md)\n",
				"installer/testdata/fix.go": "package fix\n\nconst broken = \"docs/nope.md\"\n",
			},
		},
		{
			name: "broken links in Markdown",
			files: map[string]string{
				"README.md": "# Top\n\n" +
					"[missing](docs/b.md)\n" + // 3
					"[wrong anchor](docs/a.md#arguments) [no such local](#nope)\n" + // 4
					"[case matters](docs/a.md#Args)\n" + // 5
					"[untracked](docs/draft.md)\n" + // 6
					"[outside](../other/README.md)\n" + // 7
					"[dir without README](images#x) [not Markdown](core/x.go#x) [past the end](core/x.go#L4)\n" + // 8
					"[undefined][nothing] [empty]()\n" + // 9
					"https://github.com/ballast-sched/ballast/blob/main/docs/gone.md\n" + // 10
					"[ref][r]\n\n" + // 11
					"[r]: docs/a.md#gone\n", // 13
				"docs/draft.md": "# Draft\n",
			},
			untracked: []string{"docs/draft.md"},
			want: []found{
				{"README.md", 3, "docs/b.md"},
				{"README.md", 4, "docs/a.md#arguments"},
				{"README.md", 4, "#nope"},
				{"README.md", 5, "docs/a.md#Args"},
				{"README.md", 6, "docs/draft.md"},
				{"README.md", 7, "../other/README.md"},
				{"README.md", 8, "images#x"},
				{"README.md", 8, "core/x.go#x"},
				{"README.md", 8, "core/x.go#L4"},
				{"README.md", 9, ""},
				{"README.md", 9, "[nothing]"},
				{"README.md", 10, "https://github.com/ballast-sched/ballast/blob/main/docs/gone.md"},
				{"README.md", 13, "docs/a.md#gone"},
			},
		},
		{
			name: "broken links in the CLI's messages",
			files: map[string]string{
				"installer/pkg/hint/hint.go": "package hint\n\n" +
					"// Guide is where installing is told.\n" +
					"const Guide = \"docs/install.md\"\n\n" + // 4: docs/install.md is missing
					"const Hint = \"bring the images \" +\n" + // 6
					"\t\"(docs/a.md#from-a-\" + \"checkout).\"\n",
				"installer/cmd/run.go": "package cmd\n\n" +
					"import (\n\t\"fmt\"\n\n\t\"github.com/ballast-sched/ballast/installer/pkg/hint\"\n)\n\n" +
					"func run(err error) error {\n" + // 9
					"\treturn fmt.Errorf(\"%w: see %s\", err, hint.Guide + \"#requirements\")\n" + // 10
					"}\n\n" +
					"var url = `https://github.com/ballast-sched/ballast/blob/main/docs/a.md#über`\n", // 13
				"core/cli/help.go": "package cli\n\nconst help = \"docs/a.md#args, then docs/a.md#args-2.\"\n", // 3
			},
			want: []found{
				{"core/cli/help.go", 3, "docs/a.md#args-2"},
				{"installer/cmd/run.go", 10, "docs/install.md#requirements"},
				{"installer/cmd/run.go", 13, "https://github.com/ballast-sched/ballast/blob/main/docs/a.md#über"},
				{"installer/pkg/hint/hint.go", 4, "docs/install.md"},
				{"installer/pkg/hint/hint.go", 6, "docs/a.md#from-a-checkout"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := docs()
			for name, src := range tc.files {
				files[name] = src
			}
			fsys, tracked := tree(files, tc.untracked...)
			problems, err := check(fsys, tracked)
			if err != nil {
				t.Fatal(err)
			}
			var got []found
			for _, p := range problems {
				got = append(got, found{p.file, p.line, p.link})
				if p.why == "" {
					t.Errorf("%s: no reason given", p)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("broken links (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestNearest(t *testing.T) {
	anchors := map[string]bool{"from-a-checkout-or-air-gapped": true, "loadaware-prefilter-filter-postfilter-prescore-score-reserve": true, "args": true}
	for a, want := range map[string]string{
		"loadaware-prefilter-filter-prescore-score-reserve": "loadaware-prefilter-filter-postfilter-prescore-score-reserve",
		"arg":            "args",
		"something-else": "",
		// A heading that grew words at its end.
		"from-a-checkout": "from-a-checkout-or-air-gapped",
	} {
		if got := nearest(a, anchors); got != want {
			t.Errorf("nearest(%q) = %q, want %q", a, got, want)
		}
	}
}

// TestRepository holds this repository's docs and messages to their links,
// so `go test ./hack/...` fails on a broken one as `make lint` does.
func TestRepository(t *testing.T) {
	tracked, err := trackedFiles("../..")
	if err != nil {
		t.Skipf("no git work tree: %v", err)
	}
	problems, err := check(os.DirFS("../.."), tracked)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("broken link: %s", p)
	}
}
