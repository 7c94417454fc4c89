// Command tablestore works on tablestore stores from the shell: tables,
// entities, queries and their plans, import and export (JSON lines in
// Azure's wire format, or CSV with typed columns), copies between stores,
// online backups, statistics, and the Azure Tables REST server.
//
//	tablestore tables create --store data People
//	tablestore import --store data People people.jsonl
//	tablestore query --store data People --filter "Age gt 30"
//	tablestore help import
//
// Exit status: 0 on success, 1 when the operation failed, 2 for a usage
// error (an unknown command or flag, a missing argument), 3 when a write
// was refused because the store's disk is full (tablestore.ErrNoSpace):
// free space and run it again.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// Exit codes.
const (
	exitOK      = 0
	exitFail    = 1
	exitUsage   = 2
	exitNoSpace = 3
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], newStdio())
	stop()
	os.Exit(code)
}

// command is one subcommand.
type command struct {
	name    string
	args    string // the synopsis after the name and [flags]
	summary string // one line for the command list
	help    string // what it does, in prose
	example string // example lines
	// flags declares the command's flags on fs and returns the function
	// that runs the command with the positional arguments.
	flags func(fs *flag.FlagSet, io *stdio) func(ctx context.Context, args []string) error
}

// commands returns every subcommand in the order the usage lists them.
func commands() []*command {
	return []*command{
		tablesCommand(), getCommand(), putCommand(), deleteCommand(),
		queryCommand(), explainCommand(), indexCommand(), importCommand(), exportCommand(),
		copyCommand(), backupCommand(), backupsCommand(), restoreCommand(), statsCommand(), changesCommand(), replicateCommand(), checkCommand(), serveCommand(), healthcheckCommand(),
		consoleCommand(), ttlCommand(), rekeyCommand(), encryptCommand(),
	}
}

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// run runs the command line args and returns the exit status.
func run(ctx context.Context, args []string, io *stdio) int {
	if len(args) == 0 {
		printUsage(io.stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 && name == "help" {
			return run(ctx, []string{args[1], "--help"}, io)
		}
		printUsage(io.stdout)
		return exitOK
	case "-version", "--version", "version":
		fmt.Fprintln(io.stdout, versionText())
		return exitOK
	}
	var cmd *command
	for _, c := range commands() {
		if c.name == name {
			cmd = c
		}
	}
	if cmd == nil {
		fmt.Fprintf(io.stderr, "tablestore: unknown command %q\n", name)
		var names []string
		for _, c := range commands() {
			names = append(names, c.name)
		}
		if s := nearest(name, names); s != "" {
			fmt.Fprintf(io.stderr, "Did you mean %q?\n", s)
		}
		fmt.Fprintln(io.stderr)
		printUsage(io.stderr)
		return exitUsage
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.stderr)
	runFn := cmd.flags(fs, io)
	var keys *keyFlags
	if cmd.name != "healthcheck" {
		k := declareEncryptionFlags(fs)
		keys = &k
	}
	fs.Usage = func() {} // printed below, once, where it belongs
	pos, err := parseInterspersed(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		printCommandHelp(io.stdout, cmd, fs)
		return exitOK
	}
	if err != nil {
		// The flag package has printed the error.
		if hint := flagHint(fs, err); hint != "" {
			fmt.Fprintln(io.stderr, hint)
		}
		fmt.Fprintf(io.stderr, "Run 'tablestore %s --help' for usage.\n", name)
		return exitUsage
	}
	if keys != nil {
		err = loadEncryption(*keys, io.stderr)
		defer storeEncryption.Store(nil)
	}
	if err == nil {
		err = runFn(ctx, pos)
	}
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(io.stderr, "tablestore %s: %s\nRun 'tablestore %s --help' for usage.\n", name, ue.msg, name)
		return exitUsage
	default:
		code := reportFailure(io.stderr, name, err)
		if hint := tableHint(ctx, fs, pos, err); hint != "" {
			fmt.Fprintln(io.stderr, hint)
		}
		return code
	}
}

// reportFailure prints command name's error err and returns the exit
// status: exitNoSpace for a full disk, else exitFail.
func reportFailure(w io.Writer, name string, err error) int {
	if errors.Is(err, tablestore.ErrNoSpace) {
		fmt.Fprintf(w, "tablestore %s: %s\nThe store's disk is full: free space on it and run the command again.\n", name, errorText(err))
		return exitNoSpace
	}
	if errors.Is(err, tablestore.ErrEncryptionKey) {
		err = keyAdvice(err)
	}
	fmt.Fprintf(w, "tablestore %s: %s\n", name, errorText(err))
	return exitFail
}

var (
	undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -+(.+)$`)
	invalidValue  = regexp.MustCompile(`^invalid value ".*" for flag -+([^:]+):`)
)

// flagHint explains a flag parse error further: the nearest flag to an
// unknown one, or the form of a duration.
func flagHint(fs *flag.FlagSet, err error) string {
	if m := undefinedFlag.FindStringSubmatch(err.Error()); m != nil {
		name, _, _ := strings.Cut(m[1], "=")
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		s := nearest(name, names)
		if syn, ok := flagSynonyms[strings.ToLower(name)]; ok && s == "" && fs.Lookup(syn) != nil {
			s = syn
		}
		if s != "" {
			return fmt.Sprintf("Did you mean --%s?", s)
		}
		return ""
	}
	if m := invalidValue.FindStringSubmatch(err.Error()); m != nil {
		if f := fs.Lookup(m[1]); f != nil {
			if g, ok := f.Value.(flag.Getter); ok {
				if _, ok := g.Get().(time.Duration); ok {
					return fmt.Sprintf("--%s takes a duration: a number and a unit (ns, us, ms, s, m, h), such as 90s, 15m, 36h or 1h30m; a day is 24h", f.Name)
				}
			}
		}
	}
	return ""
}

// tableHint names the table nearest to a positional argument when err
// is TableNotFound, from the store of the command's --store.
func tableHint(ctx context.Context, fs *flag.FlagSet, pos []string, err error) string {
	if tablestore.ErrorCode(err) != edm.CodeTableNotFound {
		return ""
	}
	f := fs.Lookup("store")
	if f == nil || f.Value.String() == "" {
		return ""
	}
	db, oerr := openStore(f.Value.String(), nil)
	if oerr != nil {
		return ""
	}
	defer db.Close()
	var names []string
	for name, err := range db.TableNames(ctx, "") {
		if err != nil {
			return ""
		}
		if names = append(names, name); len(names) == 10000 {
			break
		}
	}
	for _, a := range pos {
		if s := nearest(a, names); s != "" {
			return fmt.Sprintf("Did you mean table %q?", s)
		}
	}
	return ""
}

// errorText is err's message without the library's "tablestore: "
// prefix, which the command's own prefix already says.
func errorText(err error) string {
	return strings.ReplaceAll(err.Error(), "tablestore: ", "")
}

// parseInterspersed parses flags placed anywhere among the positional
// arguments (stdlib flag stops at the first positional one) and returns
// the positional arguments. After "--" everything is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `tablestore works on tablestore stores: a local store directory or, with the
Azure driver, an Azure Tables connection string.

Usage: tablestore <command> [flags] [arguments]

Commands:
`)
	width := 0
	for _, c := range commands() {
		width = max(width, len(c.name))
	}
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprint(w, `
Every command takes --help. The store comes from --store, or from the
TABLESTORE_STORE environment variable. --version prints the version.

Exit status: 0 success, 1 the operation failed, 2 usage error.
`)
}

func printCommandHelp(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: tablestore %s [flags] %s\n\n%s\n", c.name, c.args, strings.TrimSpace(c.help))
	fmt.Fprintf(w, "\nExample:\n")
	for _, line := range strings.Split(strings.TrimSpace(c.example), "\n") {
		fmt.Fprintf(w, "  %s\n", strings.TrimSpace(line))
	}
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintf(w, "\nFlags:\n")
		out := fs.Output()
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(out)
	}
}

// stringList is a repeatable or comma-separated string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*l = append(*l, part)
		}
	}
	return nil
}

// wantArgs checks the number of positional arguments.
func wantArgs(args []string, min, max int, what string) error {
	if len(args) < min || (max >= 0 && len(args) > max) {
		return usagef("want %s, got %d argument(s)", what, len(args))
	}
	return nil
}
