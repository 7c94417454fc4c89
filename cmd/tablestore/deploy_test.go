package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/azure"
	"github.com/tablestore/tablestore/server"
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
	// The image's HEALTHCHECK asks the admin port the ENV sets, and passes.
	hc := regexp.MustCompile(`(?m)^HEALTHCHECK .*CMD \["/usr/local/bin/tablestore", "healthcheck", "http://127\.0\.0\.1:9090(/\w+)"\]$`).FindStringSubmatch(text)
	require.NotNil(t, hc, "the Containerfile's HEALTHCHECK runs tablestore healthcheck on the admin port")
	require.Contains(t, m[1], "TABLESTORE_ADMIN_ADDR=0.0.0.0:9090")
	ok(t, "healthcheck", admin+hc[1])
	resp, err := http.Get("http://" + p.addr + "/devstoreaccount1/Tables")
	require.NoError(t, err)
	resp.Body.Close()
	p.waitOutput(t, `\{"time":.*"msg":"request"`)
	entries, err := os.ReadDir(data)
	require.NoError(t, err)
	require.NotEmpty(t, entries)
}

// TestContainerTestkit runs serve as docs/testing-packages.md runs the
// image's test kit: the Containerfile's ENV with the store settings
// switched off, the controls beyond loopback, a token from the
// environment that every control request needs.
func TestContainerTestkit(t *testing.T) {
	env := containerEnv(t, "")
	env["TABLESTORE_CREATE"] = "false"
	env["TABLESTORE_TESTKIT"] = "true"
	env["TABLESTORE_TESTKIT_TOKEN"] = "container-token"
	env["TABLESTORE_ADMIN_ADDR"] = "0.0.0.0:0"
	p := startServe(t, envList(env))
	_, port, err := net.SplitHostPort(p.adminAddr(t))
	require.NoError(t, err)
	reset := "http://127.0.0.1:" + port + "/testkit/reset"
	for token, want := range map[string]int{"": http.StatusUnauthorized, "container-token": http.StatusOK} {
		req, err := http.NewRequest(http.MethodPost, reset, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode, "token %q", token)
	}
}

// composeService reads one compose file's service "tablestore": its
// environment (KEY: value lines), ports and volumes (list items). It
// knows only the shapes deploy/ uses.
func composeService(t *testing.T, file string) (env map[string]string, ports, volumes []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", file))
	require.NoError(t, err)
	env = map[string]string{}
	var inService bool
	var section string
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		text := strings.TrimSpace(line)
		switch {
		case indent == 0:
			inService = false
		case indent == 2:
			inService = text == "tablestore:"
		case !inService:
		case indent == 4:
			section = strings.TrimSuffix(text, ":")
		case section == "environment":
			k, v, _ := strings.Cut(text, ":")
			env[k] = strings.TrimSpace(v)
		case section == "ports":
			ports = append(ports, strings.Trim(strings.TrimPrefix(text, "- "), `"`))
		case section == "volumes":
			volumes = append(volumes, strings.TrimPrefix(text, "- "))
		}
	}
	return env, ports, volumes
}

// containerEnv is the Containerfile's ENV with the store in data and the
// listeners moved to free loopback ports.
func containerEnv(t *testing.T, data string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "Containerfile"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^ENV (.*)$`).FindStringSubmatch(strings.ReplaceAll(string(b), "\\\n", " "))
	require.NotNil(t, m)
	env := map[string]string{}
	for _, kv := range strings.Fields(m[1]) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	env["TABLESTORE_DIR"] = data
	env["TABLESTORE_ADDR"], env["TABLESTORE_ADMIN_ADDR"] = "127.0.0.1:0", "127.0.0.1:0"
	return env
}

func envList(env map[string]string) []string {
	var l []string
	for k, v := range env {
		l = append(l, k+"="+v)
	}
	return l
}

// TestComposeDropIn runs serve with the image's and deploy/compose.yaml's
// environment and nothing else: with no key, no TLS and no files beside
// it, it serves Azurite's development account over http, and a client
// of the development connection string creates a table. The port is
// Azurite's table port.
func TestComposeDropIn(t *testing.T) {
	env, ports, volumes := composeService(t, "compose.yaml")
	require.Contains(t, ports, "127.0.0.1:10002:10002")
	for k, v := range env {
		require.NotContains(t, v, "${", "compose.yaml needs no variable from the environment: %s", k)
	}
	for _, v := range volumes {
		require.False(t, strings.HasPrefix(v, "./"), "compose.yaml needs no local file: %s", v)
	}
	data := t.TempDir()
	merged := containerEnv(t, data)
	for k, v := range env {
		merged[k] = strings.ReplaceAll(v, "/data", data)
	}
	p := startServe(t, envList(merged))
	p.waitOutput(t, `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=`+regexp.QuoteMeta(server.DevKey))
	cs := regexp.MustCompile(`DefaultEndpointsProtocol=http;\S+`).FindString(p.output())
	client, err := azure.Open(cs, nil)
	require.NoError(t, err)
	defer client.Close()
	_, err = client.CreateTable(context.Background(), "Compose")
	require.NoError(t, err)
}

// TestComposeTLSOverride runs serve with deploy/compose.tls.yaml laid over
// compose.yaml: the key comes from $TABLESTORE_ACCOUNT_KEY (required), the
// certificate and key from the mounted ./tls, and the server answers
// https only to signed requests.
func TestComposeTLSOverride(t *testing.T) {
	base, _, _ := composeService(t, "compose.yaml")
	over, _, volumes := composeService(t, "compose.tls.yaml")
	require.Contains(t, volumes, "./tls:/tls:ro")
	require.Equal(t, "${TABLESTORE_ACCOUNT_KEY:?set TABLESTORE_ACCOUNT_KEY}", over["TABLESTORE_ACCOUNT_KEY"])
	tlsDir := t.TempDir()
	files := tablestoretest.NewTLSFiles(t, tlsDir)
	data := t.TempDir()
	merged := containerEnv(t, data)
	key := base64.StdEncoding.EncodeToString([]byte("the compose account key"))
	for _, env := range []map[string]string{base, over} {
		for k, v := range env {
			v = strings.ReplaceAll(v, "/data", data)
			v = strings.Replace(v, "/tls/cert.pem", files.CertFile, 1)
			v = strings.Replace(v, "/tls/key.pem", files.KeyFile, 1)
			if strings.HasPrefix(v, "${TABLESTORE_ACCOUNT_KEY") {
				v = key
			}
			merged[k] = v
		}
	}
	p := startServe(t, envList(merged))
	p.waitOutput(t, `DefaultEndpointsProtocol=https;AccountName=devstoreaccount1;AccountKey=<key of devstoreaccount1>`)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: files.Pool}}}
	resp, err := client.Get("https://" + p.addr + "/devstoreaccount1/Tables")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
}
