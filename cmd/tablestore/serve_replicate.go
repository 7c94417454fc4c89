package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/replicate"
)

// serveReplicating runs serveFn while a replicator mirrors src into the
// store to names, following its commits. A replication that fails stops
// the server (gracefully) and is the error returned. Once the server has
// stopped, the replicator applies the last commits (within timeout) and
// saves its positions.
func serveReplicating(ctx context.Context, io *stdio, src *tablestore.DB, to, state string, tables []string,
	timeout time.Duration, serveFn func(context.Context) error) (err error) {
	dst, err := openOrCreateStore(to, nil, io.stderr, "replicate")
	if err != nil {
		return err
	}
	defer closeStore(dst, &err)
	pos, err := loadStateFile(state)
	if err != nil {
		return err
	}
	if len(tables) == 0 { // every table as serve starts, also for the last catching up
		for name, err := range src.TableNames(ctx, "") {
			if err != nil {
				return err
			}
			tables = append(tables, name)
		}
		if len(tables) == 0 {
			fmt.Fprintln(io.stderr, "serve: WARNING: --replicate-to: the store has no table to mirror")
			tables = []string{} // not nil, which would mean every table when the mirror catches up at the end
		}
	}
	rp := newReplicateProgress(io)
	opts := replicate.Options{Tables: tables, Positions: pos, Follow: true, OnProgress: rp.update}
	sctx, stopServe := context.WithCancelCause(ctx)
	defer stopServe(nil)
	rctx, stopRepl := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRepl()
	done := make(chan error, 1)
	go func() {
		err := replicate.Run(rctx, src, dst, opts)
		if err != nil {
			fmt.Fprintf(io.stderr, "serve: replication stopped: %s\n", errorText(err))
			stopServe(err)
		}
		done <- err
	}()
	err = serveFn(sctx)
	stopRepl()
	rerr := <-done
	if rerr == nil {
		// Catch up with the last commits, which no client can add to now.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		opts.Follow = false
		rerr = replicate.Run(dctx, src, dst, opts)
		cancel()
	}
	rp.finish()
	return errors.Join(err, rerr)
}
