package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/server"
)

// sdkServeArg makes this program serve tablestore's REST API for the sdk
// mode's parent process.
const sdkServeArg = "-sdk-serve"

// runSDKServe is the child side of the sdk mode: tablestore's REST
// handler with default options (the development account) over an
// in-memory store, on a free 127.0.0.1 port. It prints "listening
// <addr>" once it accepts connections and serves until ctx ends (the
// parent's interrupt), then shuts down and closes the store.
func runSDKServe(ctx context.Context) error {
	db, err := tablestore.OpenInMemory(nil)
	if err != nil {
		return err
	}
	defer db.Close()
	h, err := server.New(db, nil)
	if err != nil {
		return err
	}
	return serveLoopback(ctx, h)
}

// serveLoopback serves h through server.NewHTTPServer on a free
// loopback port, printing "listening ADDR" (what startListening reads),
// until ctx ends.
func serveLoopback(ctx context.Context, h http.Handler) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := server.NewHTTPServer(l.Addr().String(), h)
	fmt.Printf("listening %s\n", l.Addr())
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// startListening starts cmd, a child that prints "listening ADDR" first
// (serveLoopback), and returns it tracked and its address; what names
// it in errors.
func startListening(ctx context.Context, cmd *exec.Cmd, how, what string) (*sdkServer, string, error) {
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	line, err := readFirstLine(ctx, out, 30*time.Second)
	s := processServer(cmd, how, "")
	if err != nil {
		s.stop()
		return nil, "", fmt.Errorf("%s: %w", what, err)
	}
	addr, ok := strings.CutPrefix(line, "listening ")
	if !ok {
		s.stop()
		return nil, "", fmt.Errorf("%s printed %q", what, line)
	}
	go io.Copy(io.Discard, out)
	return s, addr, nil
}
