// apiload: reviews POSTed the way the apiserver's webhook client sends
// them, for the 16-core device's together.sh (TESTS="go"): Go's
// net/http Transport over HTTP/1.1 on kept connections, with its
// default 4 KiB write buffer, so a review's head and first bytes leave
// in one TLS record and the rest in others (wrk and openloop write a
// request at once: one record up to 16 KiB). The apiserver's transport
// leaves WriteBufferSize unset (k8s.io/apimachinery utilnet
// SetTransportDefaults), and topogate offers no HTTP/2.
//
//	apiload -u URL -b BODY_FILE -d SECONDS -c CONNECTIONS
//
// Prints "N reviews" (answered 200) and, if any failed, "F failed".
package main

import (
	"bytes"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	url := flag.String("u", "", "the webhook's URL")
	bodyFile := flag.String("b", "", "the AdmissionReview to send")
	secs := flag.Int("d", 5, "seconds")
	conns := flag.Int("c", 32, "connections, one request in flight on each")
	flag.Parse()
	body, err := os.ReadFile(*bodyFile)
	if err != nil || *url == "" {
		fmt.Fprintln(os.Stderr, "usage: apiload -u URL -b BODY_FILE [-d SECONDS] [-c CONNECTIONS]")
		os.Exit(2)
	}
	tr := &http.Transport{
		// The bench's certificates are self-signed; what is measured is the server.
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
		MaxIdleConnsPerHost: *conns,
		MaxConnsPerHost:     *conns,
	}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var ok, failed int64
	end := time.Now().Add(time.Duration(*secs) * time.Second)
	var wg sync.WaitGroup
	for i := 0; i < *conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				req, _ := http.NewRequest("POST", *url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					atomic.AddInt64(&failed, 1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					atomic.AddInt64(&ok, 1)
				} else {
					atomic.AddInt64(&failed, 1)
				}
			}
		}()
	}
	wg.Wait()
	fmt.Printf("%d reviews\n", ok)
	if failed > 0 {
		fmt.Printf("%d failed\n", failed)
	}
}
