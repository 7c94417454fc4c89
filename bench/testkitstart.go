package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"time"

	"github.com/tablestore/tablestore/tablestoretest/azurite"
)

// runTestkitStart measures how long `tablestore serve --testkit` and
// Azurite's Table service each take from process start to the first
// successful request (GET /devstoreaccount1/Tables, signed with the
// development account's key, answered 200), over
// rounds starts of each, and prints the best and the median.
func runTestkitStart(ctx context.Context, c config, dataDir string) error {
	bin := c.cliBin
	if bin == "" {
		var err error
		if bin, err = buildTablestore(ctx, dataDir); err != nil {
			return err
		}
	}
	rounds := max(c.rounds, 5)
	measure := func(name string, start func(port int) (*exec.Cmd, error)) ([]time.Duration, error) {
		var got []time.Duration
		for range rounds {
			port, err := freeLoopbackPort()
			if err != nil {
				return nil, err
			}
			t0 := time.Now()
			cmd, err := start(port)
			if err != nil {
				return nil, err
			}
			err = waitFirstOK(ctx, cmd, fmt.Sprintf("http://127.0.0.1:%d/devstoreaccount1/Tables", port))
			d := time.Since(t0)
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			got = append(got, d)
		}
		slices.Sort(got)
		return got, nil
	}
	kit, err := measure("tablestore serve --testkit", func(port int) (*exec.Cmd, error) {
		admin, err := freeLoopbackPort()
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(bin, "serve", "--testkit", "--log-level", "none",
			"--addr", "127.0.0.1:"+strconv.Itoa(port), "--admin-addr", "127.0.0.1:"+strconv.Itoa(admin))
		return cmd, cmd.Start()
	})
	if err != nil {
		return err
	}
	fmt.Printf("%-28s best %7.1f ms   median %7.1f ms   (%d starts)\n", "tablestore serve --testkit",
		ms(kit[0]), ms(kit[len(kit)/2]), len(kit))
	azBin, err := azurite.Find()
	if err != nil {
		fmt.Printf("%-28s not installed (npm ci in compat/js)\n", "azurite-table")
		return nil
	}
	az, err := measure("azurite-table", func(port int) (*exec.Cmd, error) {
		cmd := exec.Command(azBin, "--tableHost", "127.0.0.1", "--tablePort", strconv.Itoa(port),
			"--inMemoryPersistence", "--skipApiVersionCheck", "--disableProductStyleUrl", "--silent", "--disableTelemetry")
		cmd.Dir = dataDir
		return cmd, cmd.Start()
	})
	if err != nil {
		return err
	}
	fmt.Printf("%-28s best %7.1f ms   median %7.1f ms   (%d starts)\n", "azurite-table (in memory)",
		ms(az[0]), ms(az[len(az)/2]), len(az))
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// waitFirstOK polls url every millisecond until it answers 200, for at
// most a minute or until the process exits.
func waitFirstOK(ctx context.Context, cmd *exec.Cmd, url string) error {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("Accept", "application/json;odata=nometadata")
		req.Header.Set("x-ms-version", "2019-02-02")
		signLite(req, azurite.Account, azurite.Key, "/Tables")
		if resp, err := client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if cmd.ProcessState != nil {
			return fmt.Errorf("exited before answering")
		}
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("no 200 from %s within a minute", url)
}

// signLite signs req with SharedKeyLite for the Table service, path-style
// (path after the account).
func signLite(req *http.Request, account, key64, path string) {
	key, _ := base64.StdEncoding.DecodeString(key64)
	date := time.Now().UTC().Format(http.TimeFormat)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(date + "\n/" + account + "/" + account + path))
	req.Header.Set("x-ms-date", date)
	req.Header.Set("Authorization", "SharedKeyLite "+account+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
}
