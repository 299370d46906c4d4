// Command hog holds a given amount of memory until it is signalled: the load
// the end-to-end tests put on a real node to see the scheduler steer around it.
//
//	hog --memory 1Gi [--ramp 30s] [--for 20s]
//
// It allocates the memory in chunks, writes to every page so the kernel really
// backs it (and the pod's memory cgroup charges it), logs what it holds, and
// keeps it until SIGTERM or SIGINT, then exits 0. With --ramp it spreads the
// allocation evenly over that duration instead of taking it all at once; with
// --for it exits 0 once it has run that long, as a Job's pod ends its work.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

func main() {
	opts, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		os.Exit(2) // parseFlags has said why
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if opts.run > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.run)
		defer cancel()
	}
	logger := log.New(os.Stderr, "hog: ", log.LstdFlags)
	held := hold(ctx, opts, os.Getpagesize(), logger)
	<-ctx.Done()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		logger.Printf("ran %v, releasing %s", opts.run, mib(size(held)))
	} else {
		logger.Printf("signalled, releasing %s", mib(size(held)))
	}
	runtime.KeepAlive(held)
}

// chunkSize is how much hog allocates at a time; with --ramp it also sets how
// smooth the ramp is.
const chunkSize = 16 << 20

// hold allocates opts.memory bytes in chunks, writing one byte to every page
// of each, pausing between chunks so the whole takes opts.ramp. It stops early
// when ctx is done and returns what it holds.
func hold(ctx context.Context, opts options, pageSize int, logger *log.Logger) [][]byte {
	logger.Printf("allocating %s over %v", mib(opts.memory), opts.ramp)
	chunks := (opts.memory + chunkSize - 1) / chunkSize
	start := time.Now()
	var held [][]byte
	var total int64
	nextReport := opts.memory / 10
	for total < opts.memory {
		n := min(chunkSize, opts.memory-total)
		b := make([]byte, n)
		for i := 0; i < len(b); i += pageSize {
			b[i] = 1
		}
		held = append(held, b)
		total += n
		if total >= nextReport && total < opts.memory {
			logger.Printf("holding %s of %s", mib(total), mib(opts.memory))
			nextReport += opts.memory / 10
		}
		if opts.ramp == 0 || total == opts.memory {
			continue
		}
		// Chunk k is due at ramp*k/chunks from the start, however long the
		// allocations before it took.
		due := start.Add(opts.ramp * time.Duration(len(held)) / time.Duration(chunks))
		select {
		case <-ctx.Done():
			logger.Printf("signalled while ramping up at %s", mib(total))
			return held
		case <-time.After(time.Until(due)):
		}
	}
	logger.Printf("holding %s (%d bytes), touched every %d-byte page; waiting for SIGTERM", mib(total), total, pageSize)
	return held
}

func size(held [][]byte) int64 {
	var n int64
	for _, b := range held {
		n += int64(len(b))
	}
	return n
}

// mib formats a byte count in MiB, with a fraction only when there is one.
func mib(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%.2fMiB", float64(n)/(1<<20))
}

// options are hog's command-line settings.
type options struct {
	// memory is how many bytes to hold.
	memory int64
	// ramp is how long to take to reach memory; zero allocates at once.
	ramp time.Duration
	// run is how long to run before exiting; zero runs until signalled.
	run time.Duration
}

// parseFlags reads hog's flags. It writes any error, with the usage, to
// errOut itself, as package flag does for the errors it finds.
func parseFlags(args []string, errOut io.Writer) (options, error) {
	var opts options
	fs := flag.NewFlagSet("hog", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.Var((*memoryValue)(&opts.memory), "memory",
		"memory to hold: a Kubernetes quantity (512Mi, 1Gi, 1.5G) or a whole number of MiB (512); required")
	fs.DurationVar(&opts.ramp, "ramp", 0, "spread the allocation over this long (e.g. 30s); 0 allocates at once")
	fs.DurationVar(&opts.run, "for", 0, "exit 0 after running this long (e.g. 20s), as a Job's pod does; 0 runs until signalled")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	var err error
	switch {
	case fs.NArg() > 0:
		err = fmt.Errorf("unexpected arguments: %q", fs.Args())
	case opts.memory == 0:
		err = errors.New("-memory is required")
	case opts.ramp < 0:
		err = fmt.Errorf("-ramp must not be negative, got %v", opts.ramp)
	case opts.run < 0:
		err = fmt.Errorf("-for must not be negative, got %v", opts.run)
	}
	if err != nil {
		fmt.Fprintln(errOut, err)
		fs.Usage()
		return options{}, err
	}
	return opts, nil
}
