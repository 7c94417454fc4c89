package main

import (
	"net"
	"net/http"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/console"
	"github.com/tablestore/tablestore/server"
)

// admin makes the admin server, with the console if asked for, and
// listens for it; both nil without --admin-addr. The caller closes the
// listener.
func (c *serveConfig) admin(io *stdio, h http.Handler, served []server.Account, metrics *server.Metrics) (*http.Server, net.Listener, error) {
	f := c.f
	if *f.adminAddr == "" {
		return nil, nil, nil
	}
	stores := map[string]*tablestore.DB{}
	for _, a := range served {
		stores[a.Name] = a.DB
	}
	ah, err := server.NewAdminHandler(server.AdminOptions{Metrics: metrics, Stores: stores,
		Pprof: *f.pprof, BackupDir: *f.backupDir, PerAccountDirs: f.multi(), Logger: c.logger, Hosts: f.adminHosts})
	if err != nil {
		return nil, nil, err
	}
	var webConsole *console.Console
	if *f.console {
		if ah, webConsole, err = mountConsole(io.stderr, ah, h, served, metrics, *f.anonymous, c.where, f.adminHosts, c.logger); err != nil {
			return nil, nil, err
		}
	}
	ah = f.kit.mount(ah, f.adminHosts)
	srv := server.NewHTTPServer(*f.adminAddr, ah)
	srv.WriteTimeout = 0 // a profile or a backup may take long
	ln, err := net.Listen("tcp", *f.adminAddr)
	if err != nil {
		return nil, nil, err
	}
	if webConsole != nil {
		printConsole(io.stderr, webConsole, ln.Addr(), len(served) > 1 || !*f.anonymous)
	}
	if !loopbackAddr(ln.Addr()) {
		what := "has no authentication"
		if f.kit.token != "" {
			what = "has no authentication but on /testkit/ (its token)"
		}
		c.warn("the admin listener " + ln.Addr().String() + " is reachable beyond this machine and " + what + ": keep it on a private network")
	}
	return srv, ln, nil
}
