package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
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
