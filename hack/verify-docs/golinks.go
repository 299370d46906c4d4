package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// module is the import path every Ballast package starts with.
const module = "github.com/ballast-sched/ballast"

// goLink is a link into the docs that a string constant of the Go code
// holds.
type goLink struct {
	file string
	line int
	link string
}

// docsLink finds, in a string the code may print, the links into this
// repository's docs: a path under docs/ (with its anchor), as messages and
// flag help write them, or a URL of this repository on GitHub.
var docsLink = regexp.MustCompile("(?:^|[^A-Za-z0-9_./-])(docs/[A-Za-z0-9_./-]*(?:#[\\p{L}\\p{N}_-]*)?)|" +
	"((?i:https?://(?:www\\.)?github\\.com/ballast-sched/ballast/(?:blob|tree)/main)(?:[/?#][^\\s<>()\\[\\]{}\"'`]*)?)")

// goDocLinks parses the Go files (paths in fsys) and returns the links into
// the docs their string constants hold. A constant is read whole, as the
// program prints it: "see docs/" + "x.md#y" is one link, and so is a
// concatenation with a named constant of the same package or of another
// Ballast package.
func goDocLinks(fsys fs.FS, files []string) ([]goLink, error) {
	fset := token.NewFileSet()
	type source struct {
		name string
		file *ast.File
	}
	var sources []source
	for _, name := range files {
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		sources = append(sources, source{name, f})
	}
	e := &evaluator{consts: map[string]map[string]constant{}, pkgNames: map[string]string{}}
	for _, s := range sources {
		dir := path.Dir(s.name)
		e.pkgNames[dir] = s.file.Name.Name
		if e.consts[dir] == nil {
			e.consts[dir] = map[string]constant{}
		}
		for _, decl := range s.file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						e.consts[dir][n.Name] = constant{expr: vs.Values[i], dir: dir, file: s.file}
					}
				}
			}
		}
	}
	var links []goLink
	for _, s := range sources {
		dir := path.Dir(s.name)
		ast.Inspect(s.file, func(n ast.Node) bool {
			switch n.(type) {
			case *ast.ImportSpec:
				return false
			case *ast.BasicLit, *ast.BinaryExpr:
			default:
				return true
			}
			v, ok := e.eval(dir, s.file, n.(ast.Expr), 0)
			if !ok {
				return true
			}
			line := fset.Position(n.Pos()).Line
			for _, m := range docsLink.FindAllStringSubmatch(v, -1) {
				l := strings.TrimRight(m[1]+m[2], ".,:;!?")
				links = append(links, goLink{file: s.name, line: line, link: l})
			}
			return false
		})
	}
	return links, nil
}

// constant is a named constant's expression and where it is declared.
type constant struct {
	expr ast.Expr
	dir  string
	file *ast.File
}

// evaluator works out the value of string constant expressions.
type evaluator struct {
	// consts holds, by package directory, the package-level constants.
	consts map[string]map[string]constant
	// pkgNames holds the package name of each directory.
	pkgNames map[string]string
}

// eval returns the value of a string constant expression written in file
// (of the package in dir); ok is false when it is not one.
func (e *evaluator) eval(dir string, file *ast.File, x ast.Expr, depth int) (string, bool) {
	if depth > 50 {
		return "", false
	}
	switch x := x.(type) {
	case *ast.BasicLit:
		if x.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(x.Value)
		return s, err == nil
	case *ast.ParenExpr:
		return e.eval(dir, file, x.X, depth+1)
	case *ast.BinaryExpr:
		if x.Op != token.ADD {
			return "", false
		}
		a, ok := e.eval(dir, file, x.X, depth+1)
		if !ok {
			return "", false
		}
		b, ok := e.eval(dir, file, x.Y, depth+1)
		return a + b, ok
	case *ast.Ident:
		if c, ok := e.consts[dir][x.Name]; ok {
			return e.eval(c.dir, c.file, c.expr, depth+1)
		}
	case *ast.SelectorExpr:
		pkg, ok := x.X.(*ast.Ident)
		if !ok {
			return "", false
		}
		if other, ok := e.importedDir(file, pkg.Name); ok {
			if c, ok := e.consts[other][x.Sel.Name]; ok {
				return e.eval(c.dir, c.file, c.expr, depth+1)
			}
		}
	}
	return "", false
}

// importedDir returns the directory of the Ballast package that file
// imports under name.
func (e *evaluator) importedDir(file *ast.File, name string) (string, bool) {
	for _, imp := range file.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		rel, ok := strings.CutPrefix(p, module+"/")
		if !ok {
			continue
		}
		if imp.Name != nil && imp.Name.Name == name || imp.Name == nil && e.pkgNames[rel] == name {
			return rel, true
		}
	}
	return "", false
}
