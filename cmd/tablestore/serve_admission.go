package main

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/tablestore/tablestore/server"
)

// checkLimits checks the admission flags.
func (f *serveFlags) checkLimits() error {
	switch {
	case *f.maxRequests <= 0:
		return usagef("--max-requests must be positive")
	case *f.maxUploads < 0:
		return usagef("--max-uploads must be positive")
	case f.minRate <= 0:
		return usagef("--min-body-rate must be positive")
	case *f.grace <= 0:
		return usagef("--body-grace must be positive")
	}
	return nil
}

// memoryLimit is the Go memory limit --memory-limit asks for, 0 to leave
// the runtime's: "auto" is server.RecommendedMemoryLimit for accounts
// handlers made with opts (each has its own budget) unless GOMEMLIMIT is
// set, "off" is none. Errors: a usage error for anything else that is
// not a size.
func memoryLimit(flag string, opts *server.Options, accounts int) (int64, error) {
	switch flag {
	case "off":
		return 0, nil
	case "auto":
		if os.Getenv("GOMEMLIMIT") != "" {
			return 0, nil
		}
		budget := opts.MemoryBudget // each further account's, as New's default makes it
		if budget <= 0 {
			budget = server.DefaultMaxBodyBytes * int64(opts.MaxConcurrentRequests)
		}
		return server.RecommendedMemoryLimit(opts) + int64(max(accounts-1, 0))*budget, nil
	}
	var b byteSize
	if err := b.Set(flag); err != nil || b <= 0 {
		return 0, usagef("--memory-limit: want a size, auto or off, not %q", flag)
	}
	return int64(b), nil
}

// byteSize is a flag holding a size in bytes: a number with an optional
// unit B, KiB, MiB, GiB (or KB, MB, GB, also powers of 1024).
type byteSize int64

func (b *byteSize) String() string { return formatBytes(int64(*b)) }

func (b *byteSize) Set(s string) error {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}} {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return fmt.Errorf("not a size: %q (use bytes or a unit: 64KiB, 256MiB, 1GiB)", s)
	}
	*b = byteSize(n * mult)
	return nil
}

// formatBytes writes n in the largest binary unit that divides it.
func formatBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
