package build

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"path"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The image's accounts: root, and nonroot whose ids DefaultUser names.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group  = "root:x:0:\nnonroot:x:65532:\n"
)

// file is one entry of the layer, owned by root.
type file struct {
	name string // without the leading slash; a directory ends in /
	mode int64
	data []byte
}

// rootFS lists the layer's entries, parents before children.
func rootFS(name string, program, caCertificates []byte) []file {
	return []file{
		{name: "etc/", mode: 0o755},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/ssl/", mode: 0o755},
		{name: "etc/ssl/certs/", mode: 0o755},
		{name: CACertificatesPath[1:], mode: 0o644, data: caCertificates},
		{name: "tmp/", mode: 0o1777},
		{name: "usr/", mode: 0o755},
		{name: "usr/local/", mode: 0o755},
		{name: BinDir[1:] + "/", mode: 0o755},
		{name: path.Join(BinDir[1:], name), mode: 0o755, data: program},
	}
}

// writeTar writes files as a tar stream with every time set to mtime.
func writeTar(w io.Writer, files []file, mtime time.Time) error {
	tw := tar.NewWriter(w)
	for _, f := range files {
		hdr := &tar.Header{
			Name:    f.name,
			Mode:    f.mode,
			ModTime: mtime,
			Format:  tar.FormatPAX,
		}
		if f.name[len(f.name)-1] == '/' {
			hdr.Typeflag = tar.TypeDir
		} else {
			hdr.Typeflag = tar.TypeReg
			hdr.Size = int64(len(f.data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// elfMachines maps the architectures Go builds for Linux to their ELF
// machine.
var elfMachines = map[string]elf.Machine{
	"386":     elf.EM_386,
	"amd64":   elf.EM_X86_64,
	"arm":     elf.EM_ARM,
	"arm64":   elf.EM_AARCH64,
	"ppc64le": elf.EM_PPC64,
	"riscv64": elf.EM_RISCV,
	"s390x":   elf.EM_S390,
}

// checkStatic rejects what would not run in the image: not a Linux ELF
// executable, another architecture, or a dynamically linked program (an
// image FROM scratch has no loader or libc).
func checkStatic(name string, program []byte, p v1.Platform) error {
	f, err := elf.NewFile(bytes.NewReader(program))
	if err != nil {
		return fmt.Errorf("%s: not an ELF executable: %w", name, err)
	}
	defer f.Close()
	if p.OS != "linux" {
		return fmt.Errorf("%s: platform %s: only linux images are built", name, p)
	}
	if want, ok := elfMachines[p.Architecture]; !ok || f.Machine != want {
		return fmt.Errorf("%s: built for %s, not for platform %s", name, f.Machine, p)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return fmt.Errorf("%s: dynamically linked; build it with CGO_ENABLED=0", name)
		}
	}
	return nil
}
