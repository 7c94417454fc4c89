package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/server"
)

// encryptionKeyEnv names the environment variable that holds the store's
// encryption key (base64) when --encryption-key-file is not given.
const encryptionKeyEnv = "TABLESTORE_ENCRYPTION_KEY"

// oldEncryptionKeyEnv holds rekey's previous key when
// --old-encryption-key-file is not given.
const oldEncryptionKeyEnv = "TABLESTORE_OLD_ENCRYPTION_KEY"

const encryptionKeyFlag = "encryption-key-file"

// storeEncryption is the encryption of the command being run, from
// --encryption-key-file or $TABLESTORE_ENCRYPTION_KEY; nil for none.
// Every local store a command opens uses it (see withEncryption).
var storeEncryption atomic.Pointer[tablestore.Encryption]

const oldEncryptionKeyFlag = "old-encryption-key-file"

// keyFlags are the key files a command that opens a store takes.
type keyFlags struct{ key, old *string }

// declareEncryptionFlags declares --encryption-key-file and
// --old-encryption-key-file on fs, for every command that opens a store.
func declareEncryptionFlags(fs *flag.FlagSet) keyFlags {
	return keyFlags{
		key: fs.String(encryptionKeyFlag, "",
			"a file holding the store's 256-bit encryption key in base64 (default $"+encryptionKeyEnv+"); an encrypted store opens only with it, and a new store is encrypted with it"),
		old: fs.String(oldEncryptionKeyFlag, "",
			"during a key rotation, a file holding the previous key in base64 (default $"+oldEncryptionKeyEnv+"): files still wrapped under it open; serve and rekey rewrap them under the new key"),
	}
}

// loadKey reads a key from file, else from the file the flag's
// variable names ($TABLESTORE_ENCRYPTION_KEY_FILE for
// --encryption-key-file), else from the environment variable env, which
// holds the key itself; nil when none is set. flagName names the flag.
//
// A key file others may write is refused; one others may read draws a
// warning on warn.
func loadKey(file, flagName, env string, warn io.Writer) ([]byte, error) {
	var text []byte
	from := ""
	if file == "" {
		file = os.Getenv(envName(flagName)) // as serve reads its flags
	}
	switch {
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", flagName, err)
		}
		if err := checkKeyFileMode(file, flagName, warn); err != nil {
			return nil, err
		}
		text, from = b, "--"+flagName+" "+file
	case os.Getenv(env) != "":
		text, from = []byte(os.Getenv(env)), "$"+env
	default:
		return nil, nil
	}
	key, err := tablestore.ParseEncryptionKey(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %s (make one with: head -c 32 /dev/urandom | base64)", from, errorText(err))
	}
	return key, nil
}

// checkKeyFileMode refuses a key file that its group or others may
// write, and warns on warn about one they may read.
func checkKeyFileMode(file, flagName string, warn io.Writer) error {
	fi, err := os.Stat(file)
	if err != nil {
		return fmt.Errorf("--%s: %w", flagName, err)
	}
	switch mode := fi.Mode().Perm(); {
	case mode&0o022 != 0:
		return fmt.Errorf("--%s %s: the key file is writable by its group or others (mode %04o), so anyone could replace the key; make it private: chmod 600 %s", flagName, file, mode, file)
	case mode&0o044 != 0:
		fmt.Fprintf(warn, "tablestore: warning: --%s %s: the key file is readable by its group or others (mode %04o); make it private: chmod 600 %s\n", flagName, file, mode, file)
	}
	return nil
}

// loadEncryption sets storeEncryption from the flags' values and the
// environment; warnings go to warn.
func loadEncryption(f keyFlags, warn io.Writer) error {
	key, err := loadKey(*f.key, encryptionKeyFlag, encryptionKeyEnv, warn)
	if err != nil {
		return err
	}
	old, err := loadKey(*f.old, oldEncryptionKeyFlag, oldEncryptionKeyEnv, warn)
	if err != nil {
		return err
	}
	switch {
	case key == nil && old != nil:
		return usagef("--%s needs the new key: give --%s FILE or set $%s", oldEncryptionKeyFlag, encryptionKeyFlag, encryptionKeyEnv)
	case key == nil:
		storeEncryption.Store(nil)
	case old == nil:
		storeEncryption.Store(&tablestore.Encryption{Key: key})
	default:
		storeEncryption.Store(&tablestore.Encryption{Key: key, PreviousKeys: [][]byte{old}})
	}
	return nil
}

// rekeyServed rewraps, in the background, the files of every served
// store still under the previous key, when serve was given one: an
// online rotation. With rewrite it re-encrypts every file under a fresh
// data key instead, whether or not a previous key was given. It reports
// on w; wait waits for it to end.
func rekeyServed(ctx context.Context, w io.Writer, served []server.Account, rewrite bool) (wait func()) {
	enc := storeEncryption.Load()
	if enc == nil || (len(enc.PreviousKeys) == 0 && !rewrite) {
		return func() {}
	}
	verb := "rewrapped"
	if rewrite {
		verb = "re-encrypted"
	}
	var wg sync.WaitGroup
	for _, a := range served {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			n, err := a.DB.Rekey(ctx, &tablestore.RekeyOptions{Rewrite: rewrite})
			if err != nil {
				fmt.Fprintf(w, "serve: rekey of account %s: %s\n", a.Name, errorText(err))
				return
			}
			fmt.Fprintf(w, "serve: rekey of account %s: %d files %s under key %s in %s\n", a.Name, n, verb, tablestore.EncryptionKeyID(enc.Key), time.Since(start).Round(time.Millisecond))
		}()
	}
	return wg.Wait
}

// withEncryption returns opts with the command's encryption, unless opts
// sets its own.
func withEncryption(opts *tablestore.Options) *tablestore.Options {
	enc := storeEncryption.Load()
	if enc == nil || (opts != nil && opts.Encryption != nil) {
		return opts
	}
	o := tablestore.Options{}
	if opts != nil {
		o = *opts
	}
	o.Encryption = enc
	return &o
}

// keyAdvice adds to an encryption key error what to do about it.
func keyAdvice(err error) error {
	var ke *tablestore.EncryptionKeyError
	if !errors.As(err, &ke) {
		return err
	}
	if ke.KeyID == "" {
		return fmt.Errorf("%s\n(the store is not encrypted: drop --%s and $%s, or convert it with tablestore encrypt)", errorText(err), encryptionKeyFlag, encryptionKeyEnv)
	}
	return fmt.Errorf("%s\n(give the key with ID %s by --%s FILE or $%s)", errorText(err), ke.KeyID, encryptionKeyFlag, encryptionKeyEnv)
}

func rekeyCommand() *command {
	return &command{
		name:    "rekey",
		args:    "",
		summary: "rewrap an encrypted store's files under a new key, or re-encrypt them",
		help: `rekey rewraps the data key of every file of an encrypted local store under
the key of --encryption-key-file (or $TABLESTORE_ENCRYPTION_KEY); the
previous key comes from --old-encryption-key-file (or
$TABLESTORE_OLD_ENCRYPTION_KEY), and so is every file of the store's
continuous backup: the directory --continuous-backup names, or else the
one the store last kept (the store records it). If a file of the backup
cannot be read under the keys given, rekey fails before it rotates
anything, naming it. Each file's header is rewritten in place,
a crash-safe half at a time; the file contents stay as they are. Afterwards
the store opens with the new key alone. This command opens the store
itself, so it must not be open in another process; serve given both keys
rekeys the stores it serves online, while it serves them.

With --rewrite it re-encrypts every file instead: each file's contents are
copied, unchanged, into a new file under a fresh data key (wrapped under
the new key), which replaces it; afterwards no file has a data key from
before the command. --old-encryption-key-file is then needed only if some
files are under another key. serve --rekey-rewrite does the same online.
It reports the files rewritten and the rate.`,
		example: `tablestore rekey --store data --encryption-key-file new.key --old-encryption-key-file old.key`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			store := storeFlag(fs)
			rewrite := fs.Bool("rewrite", false, "re-encrypt every file under a fresh data key, instead of rewrapping the data keys")
			backup := fs.String("continuous-backup", "", "the store's continuous backup directory, rotated too (default: the one the store last kept, found through the store)")
			return func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return usagef("rekey takes no arguments")
				}
				if *store == "" {
					return usagef("no store: give --store DIR or set $%s", storeEnv)
				}
				if isRemote(*store) {
					return usagef("rekey works on a local store directory only")
				}
				enc := storeEncryption.Load()
				if enc == nil {
					return usagef("rekey needs the new key: give --%s FILE or set $%s", encryptionKeyFlag, encryptionKeyEnv)
				}
				var opts *tablestore.Options
				if *backup != "" {
					opts = &tablestore.Options{ContinuousBackup: &tablestore.ContinuousBackup{Dir: *backup}}
				}
				db, err := openStore(*store, opts)
				if err != nil {
					return err
				}
				start := time.Now()
				n, err := db.Rekey(ctx, &tablestore.RekeyOptions{Rewrite: *rewrite})
				elapsed := time.Since(start)
				what := "the store " + *store
				if bdir, berr := db.ContinuousBackupDir(); berr == nil && bdir != "" {
					what += " and its continuous backup " + bdir
				}
				if cerr := db.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					return err
				}
				if !*rewrite {
					fmt.Fprintf(io.stdout, "rekey: %d files of %s rewrapped under key %s\n", n, what, tablestore.EncryptionKeyID(enc.Key))
					return nil
				}
				size := dirSize(*store)
				fmt.Fprintf(io.stdout, "rekey: %d files of %s re-encrypted under key %s in %s (%.1f MB/s)\n", n, what, tablestore.EncryptionKeyID(enc.Key), elapsed.Round(time.Millisecond), float64(size)/1e6/max(elapsed.Seconds(), 1e-3))
				return nil
			}
		},
	}
}

func encryptCommand() *command {
	return &command{
		name:    "encrypt",
		args:    "",
		summary: "copy a store into a new directory, encrypted (or decrypted)",
		help: `encrypt writes a consistent copy of a local store into a new directory (--to)
with every file encrypted under the key of --encryption-key-file (or
$TABLESTORE_ENCRYPTION_KEY): this converts an unencrypted store. The source
is opened without a key. With --decrypt it does the reverse: the source is
opened with the key and the copy is in plain text. The copy needs as much
space as the store (and a temporary checkpoint beside it while it runs);
the source is not changed. Swap the directories once the copy is written.`,
		example: `tablestore encrypt --store data --to data.enc --encryption-key-file store.key
tablestore encrypt --decrypt --store data.enc --to data.plain --encryption-key-file store.key`,
		flags: func(fs *flag.FlagSet, io *stdio) func(context.Context, []string) error {
			store := storeFlag(fs)
			to := fs.String("to", "", "the directory to write the copy into; it must not exist")
			decrypt := fs.Bool("decrypt", false, "copy an encrypted store into plain text instead")
			return func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return usagef("encrypt takes no arguments")
				}
				if *store == "" || *to == "" {
					return usagef("give --store DIR and --to NEWDIR")
				}
				if isRemote(*store) {
					return usagef("encrypt works on a local store directory only")
				}
				enc := storeEncryption.Load()
				if enc == nil {
					return usagef("encrypt needs the key: give --%s FILE or set $%s", encryptionKeyFlag, encryptionKeyEnv)
				}
				// The source opens without the key, or with it for --decrypt.
				src := &tablestore.Options{MustExist: true, CacheSize: scanCacheSize}
				target := enc
				if *decrypt {
					src.Encryption, target = enc, nil
				}
				db, err := openDir(*store, src)
				if err != nil {
					if !*decrypt && errors.Is(err, tablestore.ErrEncryptionKey) {
						return fmt.Errorf("%s (the store is encrypted already: use rekey to change its key)", errorText(err))
					}
					return err
				}
				err = db.CheckpointEncrypted(ctx, *to, target)
				if cerr := db.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					return err
				}
				what := "encrypted under key " + tablestore.EncryptionKeyID(enc.Key)
				if *decrypt {
					what = "in plain text"
				}
				fmt.Fprintf(io.stdout, "encrypt: wrote %s, %s\n", *to, what)
				return nil
			}
		},
	}
}

// dirSize is the total size of the regular files in dir (not below it).
func dirSize(dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ents {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
	}
	return n
}
