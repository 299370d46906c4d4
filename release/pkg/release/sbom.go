package release

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// SPDX is the part of an SPDX 2.3 JSON document a release writes: one
// package for the artifact (a binary, or one platform's image), one for each
// Go module and the Go standard library it was built from.
type SPDX struct {
	SPDXVersion       string             `json:"spdxVersion"`
	DataLicense       string             `json:"dataLicense"`
	SPDXID            string             `json:"SPDXID"`
	Name              string             `json:"name"`
	DocumentNamespace string             `json:"documentNamespace"`
	CreationInfo      SPDXCreationInfo   `json:"creationInfo"`
	Packages          []SPDXPackage      `json:"packages"`
	Relationships     []SPDXRelationship `json:"relationships"`
}

type SPDXCreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type SPDXPackage struct {
	Name             string            `json:"name"`
	SPDXID           string            `json:"SPDXID"`
	VersionInfo      string            `json:"versionInfo,omitempty"`
	DownloadLocation string            `json:"downloadLocation"`
	FilesAnalyzed    bool              `json:"filesAnalyzed"`
	LicenseConcluded string            `json:"licenseConcluded"`
	LicenseDeclared  string            `json:"licenseDeclared"`
	CopyrightText    string            `json:"copyrightText"`
	Checksums        []SPDXChecksum    `json:"checksums,omitempty"`
	ExternalRefs     []SPDXExternalRef `json:"externalRefs,omitempty"`
	PrimaryPurpose   string            `json:"primaryPackagePurpose,omitempty"`
}

type SPDXChecksum struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"checksumValue"`
}

type SPDXExternalRef struct {
	Category string `json:"referenceCategory"`
	Type     string `json:"referenceType"`
	Locator  string `json:"referenceLocator"`
}

type SPDXRelationship struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

// noAssertion is SPDX's "nothing said".
const noAssertion = "NOASSERTION"

// sbomSubject is what an SBOM describes.
type sbomSubject struct {
	// name and version of the artifact, purpose APPLICATION or CONTAINER.
	name, version, purpose string
	// file is the artifact (a binary, or an image's config blob) its
	// checksum is of; binary is the Go binary its modules are read from.
	file, binary string
	// purl is the artifact's package URL.
	purl string
}

// writeSBOM writes the SPDX document of subject to path. created is the
// release's source time, so the same source makes the same document.
func writeSBOM(path string, subject sbomSubject, created time.Time) error {
	info, err := buildinfo.ReadFile(subject.binary)
	if err != nil {
		return fmt.Errorf("reading the modules of %s: %w", subject.binary, err)
	}
	sum, err := fileSHA256(subject.file)
	if err != nil {
		return err
	}
	root := SPDXPackage{
		Name: subject.name, SPDXID: "SPDXRef-Package-" + spdxID(subject.name), VersionInfo: subject.version,
		DownloadLocation: noAssertion, LicenseConcluded: "Apache-2.0", LicenseDeclared: "Apache-2.0", CopyrightText: noAssertion,
		Checksums:      []SPDXChecksum{{Algorithm: "SHA256", Value: sum}},
		PrimaryPurpose: subject.purpose,
	}
	if subject.purl != "" {
		root.ExternalRefs = []SPDXExternalRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: subject.purl}}
	}
	doc := SPDX{
		SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT", Name: subject.name + "-" + subject.version,
		DocumentNamespace: "https://github.com/ballast-sched/ballast/spdx/" + subject.name + "-" + subject.version + "-" + sum,
		CreationInfo:      SPDXCreationInfo{Created: created.UTC().Format(time.RFC3339), Creators: []string{"Tool: ballast-release", "Organization: Ballast authors"}},
		Packages:          []SPDXPackage{root},
		Relationships:     []SPDXRelationship{{Element: "SPDXRef-DOCUMENT", Type: "DESCRIBES", Related: root.SPDXID}},
	}
	add := func(name, version string) {
		p := SPDXPackage{Name: name, SPDXID: "SPDXRef-Package-go-" + spdxID(name+"-"+version), VersionInfo: version,
			DownloadLocation: noAssertion, LicenseConcluded: noAssertion, LicenseDeclared: noAssertion, CopyrightText: noAssertion,
			ExternalRefs: []SPDXExternalRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: "pkg:golang/" + name + "@" + version}}}
		doc.Packages = append(doc.Packages, p)
		doc.Relationships = append(doc.Relationships, SPDXRelationship{Element: root.SPDXID, Type: "DEPENDS_ON", Related: p.SPDXID})
	}
	add("stdlib", info.GoVersion)
	for _, m := range info.Deps {
		if m.Replace != nil {
			m = m.Replace
		}
		add(m.Path, m.Version)
	}
	raw, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the SBOM of %s: %w", subject.name, err)
	}
	if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// spdxID keeps the characters an SPDX identifier may hold.
func spdxID(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '-'
	}, s)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
