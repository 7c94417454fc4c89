// Package azurite starts Azurite's Table service (the npm emulator that
// compat/js installs) on a loopback port, for tests and benchmarks that
// compare tablestore with it or run a remote driver against it. It is
// public so that a driver's own module can start the same emulator its
// model test (package tablestoretest/modeltest) runs against.
//
// Find looks for the executable in $TABLESTORE_AZURITE, else under
// compat/js/node_modules in the nearest directory above the working
// directory; Start skips the test when neither exists, unless
// $TABLESTORE_REQUIRE_AZURITE is set.
//
// Only os/exec and net/http are used: no Azure SDK enters the root module.
package azurite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Development account that Azurite serves by default.
const (
	Account = "devstoreaccount1"
	Key     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// EnvBinary names an environment variable that, when set, gives the path
// of the azurite-table executable instead of the one found under
// compat/js/node_modules.
const EnvBinary = "TABLESTORE_AZURITE"

// EnvRequire names an environment variable that, when set to a non-empty
// value, turns Start's skip for a missing installation into a failure.
// .ci/run sets it so that CI never skips the tests that need Azurite.
const EnvRequire = "TABLESTORE_REQUIRE_AZURITE"

// relBinary is where `npm ci` in compat/js puts the executable, relative
// to the repository root.
var relBinary = filepath.Join("compat", "js", "node_modules", ".bin", "azurite-table")

// ErrNotInstalled is returned by Launch when Node or the azurite package
// is missing.
var ErrNotInstalled = errors.New("tablestore: azurite: not installed")

// readyTimeout bounds the wait for Azurite to answer HTTP.
const readyTimeout = 60 * time.Second

// Process is a running azurite-table process.
type Process struct {
	cmd      *exec.Cmd
	endpoint string
	exited   chan struct{} // closed when the process has exited
	waitErr  error         // valid once exited is closed
	log      *tailBuffer
	stopOnce sync.Once
}

// Find returns the azurite-table executable: $TABLESTORE_AZURITE when set,
// else compat/js/node_modules/.bin/azurite-table in the nearest directory
// above the working directory that has one. It returns an error wrapping
// ErrNotInstalled when neither it nor node (which runs it) is present.
func Find() (string, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", fmt.Errorf("%w: node is not on PATH", ErrNotInstalled)
	}
	if p := os.Getenv(EnvBinary); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: %s=%s: %v", ErrNotInstalled, EnvBinary, p, err)
		}
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, relBinary)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w: no %s above the working directory (run `npm ci` in compat/js)", ErrNotInstalled, relBinary)
		}
		dir = parent
	}
}

// Launch starts azurite-table on a free 127.0.0.1 port with in-memory
// persistence and waits, at most a minute or until ctx ends, until it
// answers HTTP. The caller must call Close. Launch is safe for concurrent
// use; each call starts its own process.
func Launch(ctx context.Context) (*Process, error) {
	bin, err := Find()
	if err != nil {
		return nil, err
	}
	// The port is picked by binding and releasing it; another process can
	// take it in between, so a start that fails is tried again.
	var lastErr error
	for range 3 {
		p, err := launchOnce(ctx, bin)
		if err == nil {
			return p, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

func launchOnce(ctx context.Context, bin string) (*Process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	// In-memory persistence excludes --location; the working directory
	// still receives anything Azurite writes (a debug log, if enabled).
	workDir, err := os.MkdirTemp("", "azurite-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin,
		"--tableHost", "127.0.0.1",
		"--tablePort", strconv.Itoa(port),
		"--inMemoryPersistence",
		"--skipApiVersionCheck",
		"--disableProductStyleUrl",
		"--silent",
		"--disableTelemetry",
	)
	cmd.Dir = workDir
	log := &tailBuffer{max: 16 << 10}
	cmd.Stdout = log
	cmd.Stderr = log
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		os.RemoveAll(workDir)
		return nil, fmt.Errorf("tablestore: azurite: start %s: %w", bin, err)
	}
	p := &Process{
		cmd:      cmd,
		endpoint: fmt.Sprintf("http://127.0.0.1:%d/%s", port, Account),
		exited:   make(chan struct{}),
		log:      log,
	}
	go func() {
		p.waitErr = cmd.Wait()
		os.RemoveAll(workDir)
		close(p.exited)
	}()
	if err := p.waitReady(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// waitReady polls the table endpoint until any HTTP answer arrives.
func (p *Process) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.endpoint+"/Tables", nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("tablestore: azurite: exited before answering (%v); output:\n%s", p.waitErr, p.log.String())
		case <-ctx.Done():
			return fmt.Errorf("tablestore: azurite: no answer from %s: %w; output:\n%s", p.endpoint, ctx.Err(), p.log.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Endpoint returns the table service URL, path-style with the account:
// http://127.0.0.1:<port>/devstoreaccount1.
func (p *Process) Endpoint() string { return p.endpoint }

// ConnectionString returns a connection string for the development
// account that both the Go and the JavaScript SDKs accept.
func (p *Process) ConnectionString() string {
	return "DefaultEndpointsProtocol=http;AccountName=" + Account + ";AccountKey=" + Key + ";TableEndpoint=" + p.endpoint + ";"
}

// PID returns the operating-system id of the node process serving the
// tables (the executable is a node script, so node replaces env).
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Close stops the process: SIGTERM (on Unix), then a kill after five
// seconds. It waits for the exit and is safe to call more than once.
func (p *Process) Close() error {
	p.stopOnce.Do(func() {
		if err := interrupt(p.cmd.Process); err != nil {
			p.cmd.Process.Kill()
		}
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return nil
}

// Start launches Azurite for a test and returns its connection string. It
// calls t.Skip when Node or the azurite package is absent (t.Fatal when
// $TABLESTORE_REQUIRE_AZURITE is set), t.Fatal when the process fails to
// start, and stops the process in t.Cleanup.
func Start(t testing.TB) string {
	t.Helper()
	return StartProcess(t).ConnectionString()
}

// StartProcess is Start returning the Process, for callers that need its
// endpoint or pid.
func StartProcess(t testing.TB) *Process {
	t.Helper()
	p, err := Launch(context.Background())
	if errors.Is(err, ErrNotInstalled) && os.Getenv(EnvRequire) != "" {
		t.Fatalf("azurite required by %s but unavailable: %v", EnvRequire, err)
	}
	if errors.Is(err, ErrNotInstalled) {
		t.Skipf("azurite unavailable (%v); run `npm ci` in compat/js or set %s", err, EnvBinary)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (w *tailBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > w.max {
		w.b = append(w.b[:0], w.b[len(w.b)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := string(w.b)
	if strings.TrimSpace(s) == "" {
		return "(none)"
	}
	return s
}
