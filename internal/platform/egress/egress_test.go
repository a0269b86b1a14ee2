package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/dns/dnsmessage"
)

// fakeResolver answers from a map; an unknown name does not resolve.
type fakeResolver map[string][]string

func (f fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	addrs, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]net.IPAddr, len(addrs))
	for i, a := range addrs {
		ip := netip.MustParseAddr(a)
		out[i] = net.IPAddr{IP: ip.AsSlice(), Zone: ip.Zone()}
	}
	return out, nil
}

// publicAddr is a public address (documentation ranges are refused, so a real one stands in); nothing in
// these tests connects to it.
const publicAddr = "93.184.215.14"

func TestValidateURLRefusesTheSSRFProbeList(t *testing.T) {
	t.Parallel()
	resolver := fakeResolver{
		"hooks.example.com":       {publicAddr, "2606:2800:21f:cb07:6820:80da:af6b:8b2c"},
		"loopback.example.com":    {"127.0.0.1"},
		"private10.example.com":   {"10.1.2.3"},
		"private172.example.com":  {"172.16.0.1"},
		"private192.example.com":  {"192.168.1.1"},
		"linklocal.example.com":   {"169.254.10.10"},
		"metadata.example.com":    {"169.254.169.254"},
		"cgnat.example.com":       {"100.64.0.1"},
		"zero.example.com":        {"0.0.0.0"},
		"zeronet.example.com":     {"0.1.2.3"},
		"multicast.example.com":   {"224.0.0.1"},
		"broadcast.example.com":   {"255.255.255.255"},
		"reserved.example.com":    {"240.0.0.1"},
		"testnet.example.com":     {"192.0.2.10"},
		"benchmark.example.com":   {"198.18.0.1"},
		"v6loop.example.com":      {"::1"},
		"v6unspec.example.com":    {"::"},
		"ula.example.com":         {"fd12:3456::1"},
		"v6metadata.example.com":  {"fd00:ec2::254"},
		"v6linklocal.example.com": {"fe80::1"},
		"v6zone.example.com":      {"fe80::1%eth0"},
		"v6multicast.example.com": {"ff02::1"},
		"mapped.example.com":      {"::ffff:127.0.0.1"},
		"mappedmeta.example.com":  {"::ffff:169.254.169.254"},
		"compat.example.com":      {"::10.0.0.1"},
		"nat64.example.com":       {"64:ff9b::7f00:1"},
		"nat64meta.example.com":   {"64:ff9b::a9fe:a9fe"},
		"sixtofour.example.com":   {"2002:c0a8:0101::1"},
		"teredo.example.com":      {"2001:0:4136:e378:8000:63bf:3fff:fdd2"},
		"v6doc.example.com":       {"2001:db8::1"},
		"mixed.example.com":       {publicAddr, "10.0.0.1"},
		"empty.example.com":       {},
	}
	opts := Options{Resolver: resolver}
	_, err := ValidateURL(context.Background(), "https://hooks.example.com/in?x=1", opts)
	require.NoError(t, err)
	u, err := ValidateURL(context.Background(), "HTTPS://Hooks.Example.com:443/in", opts)
	require.NoError(t, err)
	require.Equal(t, "https://hooks.example.com:443/in", u.String())

	cases := map[string]Reason{
		"http://hooks.example.com/":                 ReasonScheme,
		"ftp://hooks.example.com/":                  ReasonScheme,
		"gopher://hooks.example.com/":               ReasonScheme,
		"https://hooks.example.com:8443/":           ReasonPort,
		"https://hooks.example.com:80/":             ReasonPort,
		"https://hooks.example.com:0443/":           ReasonPort,
		"https://127.0.0.1/":                        ReasonIPLiteral,
		"https://2130706433/":                       ReasonIPLiteral,
		"https://0177.0.0.1/":                       ReasonIPLiteral,
		"https://0x7f.1/":                           ReasonIPLiteral,
		"https://0x7f000001/":                       ReasonIPLiteral,
		"https://127.1/":                            ReasonIPLiteral,
		"https://127.0.0.1./":                       ReasonIPLiteral,
		"https://169.254.169.254/latest/meta-data/": ReasonIPLiteral,
		"https://[::1]/":                            ReasonIPLiteral,
		"https://[::ffff:127.0.0.1]/":               ReasonIPLiteral,
		"https://[fd00:ec2::254]/":                  ReasonIPLiteral,
		"https://[fe80::1%25eth0]/":                 ReasonIPLiteral,
		"https://%31%32%37.0.0.1/":                  ReasonInvalid,
		"https://8.8.8.8/":                          ReasonIPLiteral,
		"https://localhost/":                        ReasonHost,
		"https://api.localhost/":                    ReasonHost,
		"https://metadata/":                         ReasonHost,
		"https://user:pw@hooks.example.com/":        ReasonInvalid,
		"https://hooks.example.com\\@127.0.0.1/":    ReasonInvalid,
		"https://exa mple.com/":                     ReasonInvalid,
		"https://bücher.example.com/":               ReasonInvalid,
		"https:///nohost":                           ReasonInvalid,
		"/relative":                                 ReasonInvalid,
		"":                                          ReasonInvalid,
		"https://nowhere.example.com/":              ReasonUnresolvable,
		"https://empty.example.com/":                ReasonUnresolvable,
	}
	for host := range resolver {
		switch host {
		case "hooks.example.com", "empty.example.com":
		default:
			cases["https://"+host+"/hook"] = ReasonAddress
		}
	}
	for raw, want := range cases {
		_, err := ValidateURL(context.Background(), raw, opts)
		var e *Error
		require.ErrorAs(t, err, &e, raw)
		require.Equal(t, want, e.Reason, "%s: %v", raw, err)
		require.NotEmpty(t, e.Message)
	}
}

func TestPublic(t *testing.T) {
	t.Parallel()
	for _, a := range []string{publicAddr, "8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "64:ff9b::808:808", "::ffff:8.8.8.8", "2002:808:808::1"} {
		require.True(t, Public(netip.MustParseAddr(a)), a)
	}
	for _, a := range []string{"127.0.0.1", "10.0.0.1", "100.127.255.255", "172.31.255.255", "192.168.0.1", "169.254.169.254",
		"::1", "::", "fc00::1", "fe80::1", "ff02::1", "::ffff:10.0.0.1", "::127.0.0.1", "64:ff9b::a00:1", "64:ff9b:1::1",
		"2002:7f00:1::1", "100::1", "2001:db8::1", "3fff::1", "fec0::1"} {
		require.False(t, Public(netip.MustParseAddr(a)), a)
	}
}

func TestAllowPrivateAdmitsTestRigsButNotMetadata(t *testing.T) {
	t.Parallel()
	opts := Options{AllowPrivate: true, Resolver: fakeResolver{
		"receiver": {"10.0.0.7"}, "meta.example.com": {"169.254.169.254"}, "meta6.example.com": {"::ffff:169.254.169.254"},
	}}
	for _, raw := range []string{"http://127.0.0.1:8080/hook", "https://[::1]:9443/", "http://receiver:3000/in", "https://localhost/"} {
		if raw == "https://localhost/" {
			// localhost resolves through the fake resolver, which does not know it.
			continue
		}
		_, err := ValidateURL(context.Background(), raw, opts)
		require.NoError(t, err, raw)
	}
	for raw, want := range map[string]Reason{
		"http://169.254.169.254/latest/": ReasonAddress,
		"http://[fd00:ec2::254]/":        ReasonAddress,
		"https://meta.example.com/":      ReasonAddress,
		"https://meta6.example.com/":     ReasonAddress,
		"http://127.1:8080/":             ReasonIPLiteral,
		"ftp://receiver/":                ReasonScheme,
	} {
		_, err := ValidateURL(context.Background(), raw, opts)
		var e *Error
		require.ErrorAs(t, err, &e, raw)
		require.Equal(t, want, e.Reason, raw)
	}
}

// dnsServer is an in-process DNS server over UDP. It answers A queries for rebindName with publicAddr the
// first time and 127.0.0.1 afterwards (a DNS rebinding attacker's server), and AAAA queries with nothing.
type dnsServer struct {
	conn     net.PacketConn
	aQueries atomic.Int32
}

const rebindName = "rebind.example.net."

func startDNS(t *testing.T) *dnsServer {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &dnsServer{conn: conn}
	t.Cleanup(func() { _ = conn.Close() })
	go s.serve()
	return s
}

func (s *dnsServer) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := s.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		var p dnsmessage.Parser
		h, err := p.Start(buf[:n])
		if err != nil {
			continue
		}
		q, err := p.Question()
		if err != nil {
			continue
		}
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired})
		b.EnableCompression()
		known := q.Name.String() == rebindName
		if !known {
			b = dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, RCode: dnsmessage.RCodeNameError})
		}
		_ = b.StartQuestions()
		_ = b.Question(q)
		if known && q.Type == dnsmessage.TypeA {
			addr := [4]byte{127, 0, 0, 1}
			if s.aQueries.Add(1) == 1 {
				addr = netip.MustParseAddr(publicAddr).As4()
			}
			_ = b.StartAnswers()
			_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0}, dnsmessage.AResource{A: addr})
		}
		msg, err := b.Finish()
		if err != nil {
			continue
		}
		_, _ = s.conn.WriteTo(msg, from)
	}
}

// resolver is a net.Resolver that asks only this server.
func (s *dnsServer) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", s.conn.LocalAddr().String())
	}}
}

// canary is a TCP listener on loopback that counts the connections it accepts.
type canary struct {
	ln       net.Listener
	accepted atomic.Int32
	wg       sync.WaitGroup
}

func startCanary(t *testing.T) *canary {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	c := &canary{ln: ln}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.accepted.Add(1)
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); c.wg.Wait() })
	return c
}

func (c *canary) port() string { return strconv.Itoa(c.ln.Addr().(*net.TCPAddr).Port) }

func TestDNSRebindingIsRefusedAtConnectTime(t *testing.T) {
	t.Parallel()
	dns := startDNS(t)
	can := startCanary(t)
	opts := Options{Resolver: dns.resolver(), Timeout: 5 * time.Second}
	ctx := context.Background()

	// Registration: the name resolves to a public address, so the URL passes.
	_, err := ValidateURL(ctx, "https://rebind.example.net/hook", opts)
	require.NoError(t, err)
	require.EqualValues(t, 1, dns.aQueries.Load())

	// Delivery: the name now resolves to loopback; the dialer refuses before connecting. The canary's port
	// stands in for the port (the URL's port rule is ValidateURL's; the address rule holds at any port).
	client := NewClient(opts)
	port := can.port()
	targets := []string{
		"https://rebind.example.net/hook",
		"http://rebind.example.net:" + port + "/hook",
		"https://rebind.example.net:" + port + "/hook",
		"http://127.0.0.1:" + port + "/",
		"http://[::ffff:127.0.0.1]:" + port + "/",
		"http://[::1]:" + port + "/",
		"http://0.0.0.0:" + port + "/",
		"http://localhost:" + port + "/",
	}
	for _, target := range targets {
		resp, err := client.Get(target)
		if resp != nil {
			_ = resp.Body.Close()
		}
		require.Error(t, err, target)
		if target == "http://localhost:"+port+"/" {
			// The test's DNS server does not know localhost; either way nothing connects.
			continue
		}
		var e *Error
		require.ErrorAs(t, err, &e, target)
		require.Equal(t, ReasonAddress, e.Reason, target)
		require.Contains(t, Describe(err), "not a publicly routable address")
	}
	require.GreaterOrEqual(t, dns.aQueries.Load(), int32(4), "every attempt resolved again")

	// The same name validated now is refused too.
	_, err = ValidateURL(ctx, "https://rebind.example.net/hook", opts)
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, ReasonAddress, e.Reason)

	// Nothing ever reached the loopback listener, while it does accept connections.
	require.EqualValues(t, 0, can.accepted.Load())
	conn, err := net.Dial("tcp", can.ln.Addr().String())
	require.NoError(t, err)
	_ = conn.Close()
	require.Eventually(t, func() bool { return can.accepted.Load() == 1 }, 2*time.Second, 10*time.Millisecond)
}

func TestRedirectsAreReturnedNotFollowed(t *testing.T) {
	t.Parallel()
	var followed atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, _ *http.Request) { followed.Add(1) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	client := NewClient(Options{AllowPrivate: true})
	resp, err := client.Post(srv.URL+"/hook", "application/json", nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.Equal(t, "/elsewhere", resp.Header.Get("Location"))
	require.EqualValues(t, 0, followed.Load())
}

func TestClientIgnoresProxyEnvironmentAndTimesOut(t *testing.T) {
	// Not parallel: it sets the process environment.
	t.Setenv("HTTP_PROXY", "http://192.0.2.1:3128")
	t.Setenv("HTTPS_PROXY", "http://192.0.2.1:3128")
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })

	client := NewClient(Options{AllowPrivate: true, Timeout: 300 * time.Millisecond})
	require.Equal(t, DefaultTimeout, NewClient(Options{}).Timeout)
	resp, err := client.Get(srv.URL + "/ok")
	require.NoError(t, err, "the request went to the server, not to the environment's proxy")
	_ = resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)

	start := time.Now()
	_, err = client.Get(srv.URL + "/hang")
	require.Error(t, err)
	require.Less(t, time.Since(start), 3*time.Second)
	require.Equal(t, "timed out", Describe(err))
	require.False(t, errors.Is(err, context.Canceled))
}

func TestDialContextRefusesPrivateAddressesUnlessAllowed(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	ctx := context.Background()
	_, err = DialContext(ctx, Options{}, "tcp", ln.Addr().String())
	var refused *Error
	require.ErrorAs(t, err, &refused, "a loopback mail host is refused on a shared deployment")
	require.Equal(t, ReasonAddress, refused.Reason)
	conn, err := DialContext(ctx, Options{AllowPrivate: true}, "tcp", ln.Addr().String())
	require.NoError(t, err)
	require.NoError(t, conn.Close())
}
