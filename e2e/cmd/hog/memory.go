package main

import (
	"fmt"
	"math"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
)

// memoryValue is a flag.Value for a number of bytes, written as parseMemory
// reads it.
type memoryValue int64

func (m *memoryValue) String() string { return strconv.FormatInt(int64(*m), 10) }

func (m *memoryValue) Set(s string) error {
	n, err := parseMemory(s)
	if err != nil {
		return err
	}
	*m = memoryValue(n)
	return nil
}

// parseMemory reads a positive amount of memory in bytes. A bare whole number
// is MiB (so "512" is 512Mi, not 512 bytes as Kubernetes would read it);
// anything else is a Kubernetes resource quantity such as 1Gi, 512Mi or 1.5G.
func parseMemory(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n <= 0 || n > math.MaxInt64>>20 {
			return 0, fmt.Errorf("memory %q: want a positive number of MiB", s)
		}
		return n << 20, nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, fmt.Errorf("memory %q: want a quantity such as 1Gi or a whole number of MiB", s)
	}
	n, ok := q.AsInt64()
	if !ok || n <= 0 {
		return 0, fmt.Errorf("memory %q: want a positive whole number of bytes", s)
	}
	return n, nil
}
