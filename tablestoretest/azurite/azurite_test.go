package azurite

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStartCreatesTable starts Azurite, creates a table over plain HTTP
// with SharedKeyLite, and reads it back from the table list.
func TestStartCreatesTable(t *testing.T) {
	p := StartProcess(t)
	require.True(t, strings.HasPrefix(p.ConnectionString(), "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"))

	resp := do(t, p, http.MethodPost, "/Tables", `{"TableName":"launchercheck"}`)
	require.Equal(t, http.StatusCreated, resp.code, resp.body)

	resp = do(t, p, http.MethodPost, "/Tables", `{"TableName":"launchercheck"}`)
	require.Equal(t, http.StatusConflict, resp.code, resp.body)
	require.Contains(t, resp.body, "TableAlreadyExists")

	resp = do(t, p, http.MethodGet, "/Tables", "")
	require.Equal(t, http.StatusOK, resp.code, resp.body)
	require.Contains(t, resp.body, `"TableName":"launchercheck"`)

	// An unsigned request is refused: the account key is really checked.
	req, err := http.NewRequest(http.MethodGet, p.Endpoint()+"/Tables", nil)
	require.NoError(t, err)
	r, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	r.Body.Close()
	require.Equal(t, http.StatusForbidden, r.StatusCode)

	require.NoError(t, p.Close())
	select {
	case <-p.exited:
	default:
		t.Fatal("process still running after Close")
	}
	require.NoError(t, p.Close(), "second Close")
}

type answer struct {
	code int
	body string
}

// do sends a SharedKeyLite-signed request for the development account.
func do(t *testing.T, p *Process, method, path, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, p.Endpoint()+path, strings.NewReader(body))
	require.NoError(t, err)
	date := time.Now().UTC().Format(http.TimeFormat)
	key, err := base64.StdEncoding.DecodeString(Key)
	require.NoError(t, err)
	u, err := url.Parse(p.Endpoint() + path)
	require.NoError(t, err)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(date + "\n/" + Account + u.EscapedPath()))
	req.Header.Set("x-ms-date", date)
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("Accept", "application/json;odata=nometadata")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "SharedKeyLite "+Account+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{resp.StatusCode, string(b)}
}

// TestFindMissing reports ErrNotInstalled for a missing override path
// and for a PATH without node.
func TestFindMissing(t *testing.T) {
	t.Run("override", func(t *testing.T) {
		t.Setenv(EnvBinary, "/nonexistent/azurite-table")
		_, err := Find()
		require.ErrorIs(t, err, ErrNotInstalled)
	})
	t.Run("no node", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		_, err := Find()
		require.ErrorIs(t, err, ErrNotInstalled)
	})
	t.Run("no package", func(t *testing.T) {
		if _, err := exec.LookPath("node"); err != nil {
			t.Skip("node not on PATH")
		}
		t.Chdir(t.TempDir())
		_, err := Find()
		require.ErrorIs(t, err, ErrNotInstalled)
	})
}
