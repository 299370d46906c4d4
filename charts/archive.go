package charts

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// archiveTime is the modification time of every archive entry: a fixed time
// makes the archive, and so a HelmChart's chartContent, identical across runs.
var archiveTime = time.Unix(0, 0).UTC()

// Archive packs the embedded chart the way `helm package` lays it out
// (every path under "ballast/"), byte-for-byte reproducibly.
func Archive() ([]byte, error) {
	files, err := Files()
	if err != nil {
		return nil, err
	}
	return ArchiveFiles(files)
}

// ArchiveFiles packs files (paths relative to the chart directory) like Archive.
func ArchiveFiles(files []*loader.BufferedFile) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	zw.ModTime = archiveTime
	tw := tar.NewWriter(zw)
	for _, f := range files {
		hdr := &tar.Header{
			Name:     ChartName + "/" + f.Name,
			Mode:     0o644,
			Size:     int64(len(f.Data)),
			ModTime:  archiveTime,
			Typeflag: tar.TypeReg,
			Format:   tar.FormatPAX,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("archive %s: %w", f.Name, err)
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, fmt.Errorf("archive %s: %w", f.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
