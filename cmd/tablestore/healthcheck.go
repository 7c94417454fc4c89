package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"time"
)

func healthcheckCommand() *command {
	return &command{
		name:    "healthcheck",
		args:    "URL",
		summary: "check a running server's /healthz or /readyz (for containers)",
		help: `healthcheck asks URL (a tablestore serve admin endpoint such as
http://127.0.0.1:9090/readyz) and exits 0 when it answers 200, 1
otherwise. Container images built on an empty base have no curl: their
HEALTHCHECK runs this.`,
		example: `tablestore healthcheck http://127.0.0.1:9090/readyz`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
			return func(ctx context.Context, args []string) error {
				if err := wantArgs(args, 1, 1, "URL"); err != nil {
					return err
				}
				ctx, cancel := context.WithTimeout(ctx, *timeout)
				defer cancel()
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, args[0], nil)
				if err != nil {
					return usagef("%v", err)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return err
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					return fmt.Errorf("%s answered %s", args[0], resp.Status)
				}
				fmt.Fprintf(io.stdout, "%s: %s\n", args[0], resp.Status)
				return nil
			}
		},
	}
}
