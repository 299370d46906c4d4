package collector

import (
	"sort"
	"strings"
)

func sortStrings(s []string) []string { sort.Strings(s); return s }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
