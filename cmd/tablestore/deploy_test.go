package main

import (
	"bufio"
	"crypto/tls"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/tablestoretest"
)

// unitEnvironment reads the Environment= lines of deploy/tablestore.service
// with systemd's %S (state directory) and %d (credentials directory)
// replaced.
func unitEnvironment(t *testing.T, state, creds string) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "deploy", "tablestore.service"))
	require.NoError(t, err)
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		kv, ok := strings.CutPrefix(line, "Environment=")
		if !ok {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		env[k] = strings.NewReplacer("%S", state, "%d", creds).Replace(v)
	}
	require.NoError(t, sc.Err())
	return env
}

// TestSystemdUnit runs serve with exactly the environment of the
// systemd unit (the addresses moved to free loopback ports, the
// credentials written where LoadCredential would put them): https with
// the unit's certificate, the key from the key file, the store and
// backups under the state directory, and the admin listener answering
// the healthcheck command and a backup.
func TestSystemdUnit(t *testing.T) {
	state, creds := t.TempDir(), t.TempDir()
	files := tablestoretest.NewTLSFiles(t, t.TempDir())
	key := base64.StdEncoding.EncodeToString([]byte("the unit's account key"))
	require.NoError(t, os.WriteFile(filepath.Join(creds, "keys"), []byte(key+"\n"), 0o600))
	for from, to := range map[string]string{files.CertFile: "cert", files.KeyFile: "tlskey"} {
		b, err := os.ReadFile(from)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(creds, to), b, 0o600))
	}
	unit := unitEnvironment(t, state, creds)
	require.Equal(t, filepath.Join(creds, "keys"), unit["TABLESTORE_ACCOUNT_KEY_FILE"])
	unit["TABLESTORE_ADDR"], unit["TABLESTORE_ADMIN_ADDR"] = "127.0.0.1:0", "127.0.0.1:0"
	var env []string
	for k, v := range unit {
		env = append(env, k+"="+v)
	}
	p := startServe(t, env)
	p.waitOutput(t, `DefaultEndpointsProtocol=https;AccountName=myaccount;AccountKey=<key of myaccount>`)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: files.Pool}}}
	resp, err := client.Get("https://" + p.addr + "/myaccount/Tables")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode) // unsigned: the key file's key is in force
	admin := "http://" + p.adminAddr(t)
	ok(t, "healthcheck", admin+"/readyz")
	r := cli(t, "healthcheck", admin+"/nosuch")
	require.Equal(t, exitFail, r.code)
	ok(t, "backup", "--server", admin, "first")
	_, err = os.Stat(filepath.Join(state, "tablestore", "backups", "first"))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(state, "tablestore", "store"))
	require.NoError(t, err)
}

// TestContainerfileEnv runs serve with the Containerfile's ENV (the
// addresses moved to loopback): a store in the volume directory, JSON
// logs, the admin listener.
func TestContainerfileEnv(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "Containerfile"))
	require.NoError(t, err)
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	m := regexp.MustCompile(`(?m)^ENV (.*)$`).FindStringSubmatch(text)
	require.NotNil(t, m)
	data := t.TempDir()
	var env []string
	for _, kv := range strings.Fields(m[1]) {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "TABLESTORE_DIR":
			require.Equal(t, "/data", v)
			v = data
		case "TABLESTORE_ADDR", "TABLESTORE_ADMIN_ADDR":
			v = "127.0.0.1:0"
		}
		env = append(env, k+"="+v)
	}
	require.Contains(t, text, "USER 65532:65532")
	require.Contains(t, text, `VOLUME ["/data"]`)
	require.Contains(t, text, "EXPOSE 10002 9090")
	p := startServe(t, env, "--anonymous")
	admin := "http://" + p.adminAddr(t)
	ok(t, "healthcheck", admin+"/healthz")
	resp, err := http.Get("http://" + p.addr + "/devstoreaccount1/Tables")
	require.NoError(t, err)
	resp.Body.Close()
	p.waitOutput(t, `\{"time":.*"msg":"request"`)
	entries, err := os.ReadDir(data)
	require.NoError(t, err)
	require.NotEmpty(t, entries)
}
