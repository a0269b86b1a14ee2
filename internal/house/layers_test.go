package house_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// module is the module path; rules speak of paths relative to it.
const module = "github.com/outflowhq/outflow"

// areaEdges are the only imports allowed from one internal area into another (platform is below every area and
// needs no entry). Each says why the dependency is the area's own business; a helper two areas share belongs in
// internal/platform instead. An edge no package uses any more fails TestEveryAllowedAreaEdgeIsUsed.
var areaEdges = map[string]string{
	"agents->identity":    "a tool is allowed by the acting principal's permissions (auth.Principal)",
	"agents->eventing":    "approvals raise approval.requested and approval.decided and notify the members who decide; an app action's outcome raises campaign.action",
	"agents->trail":       "approval decisions, app connection changes and recorded product events are in the audit log",
	"agents->campaigns":   "a run builds, preflights, starts and stops its campaign through the campaign store and checks; app_action calls are made for campaign step runs and their outcome is recorded through the engine; a product event resumes the steps waiting for it (engine.ResumeWaits)",
	"agents->audience":    "a run upserts its inline leads as contacts and records their activity; a product event names its contact by address",
	"agents->mail":        "a run's plan counts its senders' capacity as the send pipeline does (mailbox day, domain auth)",
	"analytics->mail":     "a mailbox's account status follows the mail area's own rules: the domain-auth grace (mailbox.AuthBlocked), the warmup ramp (mailbox.RampOf, mailbox.Ramp) and the local day its cap counts (sending.MailboxDay); the warmup report plans each day's target with the same ramp",
	"audience->eventing":  "verification runs raise bulk_operation events into the outbox",
	"campaigns->audience": "campaigns send to contacts: addresses are read the way contacts store them",
	"campaigns->eventing": "campaign changes raise campaign.* events into the outbox",
	"campaigns->mail":     "campaign messages go out from mailboxes through the send pipeline (sending.Enqueue)",
	"campaigns->trail":    "campaign changes are recorded in the audit log",
	"eventing->identity":  "event families are gated by permission scopes, and realtime admits principals",
	"eventing->trail":     "verifying a webhook endpoint is recorded in the audit log",
	"identity->trail":     "sign-ups, members, keys and organization changes are recorded in the audit log",
	"mail->audience":      "sending checks suppressions before a message leaves",
	"mail->eventing":      "mailboxes, syncs and sends raise events into the outbox",
	"trail->identity":     "an audit entry names the acting principal (user, API key or OAuth app)",
	"inbox->audience":     "a reply or composed message is refused for suppressed recipients (suppression.Blocked)",
	"inbox->campaigns":    "a classified reply moves the lead of the campaign send it answers (engine.Answered, unsubscribe by reply)",
	"inbox->eventing":     "replies raise inbox.reply_received and notifications; inbox actions queue their relays and sends in the request's transaction",
	"inbox->mail":         "the reply hook is the mail sync's inbound hook; inbox actions mark read and move through mailsync and send through the send pipeline",

	// The analytics rollups are fed where what they count is recorded (internal/analytics/rollup), and tracking
	// records who engaged with a campaign (internal/analytics/engagement).
	"campaigns->analytics": "sends' engagement, replies, bounces, complaints and unsubscribes feed the analytics rollups, and tracking records who engaged (engagement.Record), in the transaction that records them",
	"mail->analytics":      "a send recorded as sent feeds the analytics rollups in the transaction that records it",
	"inbox->analytics":     "a classified reply's intent feeds the analytics rollups in the transaction that stores it",
}

// pkg is what the rules read of a package: its path (relative to the module) and its non-test imports of the
// module's own packages (also relative). Test imports are free: tests may reach anywhere.
type pkg struct {
	path    string
	imports []string
}

// rule reports, for one import of one package, why it breaks the rule ("" when it does not).
type rule struct {
	name  string
	check func(from, to string) string
}

var rules = []rule{
	{"internal imports only inwards", func(from, to string) string {
		if !under(from, "internal") || under(from, "internal/testkit") {
			return ""
		}
		if under(to, "internal") || to == "gen/db" || to == "migrations" || under(to, "webhook") {
			return ""
		}
		return "a domain or platform package imports only internal/..., gen/db, migrations and webhook; " +
			to + " is a layer above it (handlers translate API types, the composition root passes values down)"
	}},
	{"platform imports no area", func(from, to string) string {
		if under(from, "internal/platform") && under(to, "internal") && area(to) != "platform" && area(to) != "testkit" {
			return "internal/platform sits below every area; move what both need into platform or pass it in"
		}
		return ""
	}},
	{"areas import only allowed areas", func(from, to string) string {
		a, b := area(from), area(to)
		if a == "" || b == "" || a == b || a == "platform" || b == "platform" || a == "testkit" || b == "testkit" {
			return ""
		}
		if _, ok := areaEdges[a+"->"+b]; ok {
			return ""
		}
		return fmt.Sprintf("area %s may not import area %s: add the edge %q with its reason to areaEdges "+
			"in internal/house/layers_test.go, or move a shared helper into internal/platform", a, b, a+"->"+b)
	}},
	{"handlers do not import jobs", func(from, to string) string {
		if under(from, "handlers") && !testSupport(from) && under(to, "jobs") {
			return "handlers enqueue through domain packages' job args; constants both need live in the domain"
		}
		return ""
	}},
	{"jobs and oauth do not import handlers", func(from, to string) string {
		if (under(from, "jobs") || under(from, "oauth")) && under(to, "handlers") {
			return "handlers serve the API and are composed by cmd/outflow/app; what jobs or oauth need from them " +
				"belongs in a domain package both import"
		}
		return ""
	}},
	{"only tests reach test support", func(from, to string) string {
		if testSupport(to) && !testSupport(from) {
			return to + " is for tests; a non-test package may not import it"
		}
		return ""
	}},
	{"webhook stands alone", func(from, to string) string {
		if under(from, "webhook") && !under(to, "webhook") {
			return "webhook is public (integrators import it to verify signatures) and depends on nothing of ours"
		}
		return ""
	}},
	{"generated code imports nothing of ours", func(from, to string) string {
		if under(from, "gen") && !under(to, "gen") {
			return "gen/ is generated from openapi.yaml and the SQL alone"
		}
		return ""
	}},
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// area is the internal area of a path (internal/<area>/...), or "".
func area(path string) string {
	rest, ok := strings.CutPrefix(path, "internal/")
	if !ok {
		return ""
	}
	a, _, _ := strings.Cut(rest, "/")
	return a
}

// testSupport reports whether a package exists only for tests: the test kit, and the packages that drive the
// real server (apitest, the contract test).
func testSupport(path string) bool {
	return under(path, "internal/testkit") || under(path, "handlers/apitest") || under(path, "handlers/contract")
}

// violations lists every import of pkgs that breaks a rule, naming the package, the import and the rule.
func violations(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		for _, imp := range p.imports {
			for _, r := range rules {
				if why := r.check(p.path, imp); why != "" {
					out = append(out, fmt.Sprintf("%s imports %s (rule %q): %s", p.path, imp, r.name, why))
				}
			}
		}
	}
	return out
}

// modulePackages lists the module's packages with `go list`, run from the module root.
func modulePackages(t *testing.T) []pkg {
	t.Helper()
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	require.NoError(t, err)
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	require.NoError(t, err, stderr.String())

	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		path, ok := relative(p.ImportPath)
		require.True(t, ok, "go list ./... named %s, outside the module", p.ImportPath)
		out := pkg{path: path}
		for _, imp := range p.Imports {
			if rel, ok := relative(imp); ok {
				out.imports = append(out.imports, rel)
			}
		}
		pkgs = append(pkgs, out)
	}
	require.NotEmpty(t, pkgs)
	return pkgs
}

// relative is an import path relative to the module, and whether it is in the module at all.
func relative(importPath string) (string, bool) {
	if importPath == module {
		return ".", true
	}
	return strings.CutPrefix(importPath, module+"/")
}

func TestImportsPointOneWay(t *testing.T) {
	t.Parallel()
	for _, v := range violations(modulePackages(t)) {
		t.Error(v)
	}
}

func TestEveryAllowedAreaEdgeIsUsed(t *testing.T) {
	t.Parallel()
	used := map[string]bool{}
	for _, p := range modulePackages(t) {
		for _, imp := range p.imports {
			used[area(p.path)+"->"+area(imp)] = true
		}
	}
	for edge := range areaEdges {
		if !used[edge] {
			t.Errorf("areaEdges allows %s, but no package imports along it any more: remove the entry", edge)
		}
	}
}

// The rules themselves, each shown to fail on an import that breaks it and to pass the imports the layers
// allow; the real packages above break none of them, so this is where a rule proves it can fail.
func TestEachRuleFailsOnABadImport(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		from, to, rule string
	}{
		{"internal/audience/contacts", "gen/api", "internal imports only inwards"},
		{"internal/mail/sending", "handlers", "internal imports only inwards"},
		{"internal/eventing/delivery", "jobs", "internal imports only inwards"},
		{"internal/eventing/delivery", "oauth", "internal imports only inwards"},
		{"internal/platform/db", "cmd/outflow/app", "internal imports only inwards"},
		{"internal/platform/idempotency", "internal/identity/auth", "platform imports no area"},
		{"internal/trail/usage", "internal/mail/mailbox", "areas import only allowed areas"},
		{"internal/mail/mailbox", "internal/audience/contacts", ""}, // mail->audience is allowed (suppressions)
		{"handlers", "jobs", "handlers do not import jobs"},
		{"handlers/apitest", "jobs", ""}, // test support may start workers
		{"jobs", "handlers", "jobs and oauth do not import handlers"},
		{"oauth", "handlers/apitest", "jobs and oauth do not import handlers"},
		{"oauth", "handlers", "jobs and oauth do not import handlers"},
		{"internal/audience/verify", "internal/testkit/verifytest", "only tests reach test support"},
		{"oauth", "internal/testkit/dbtest", "only tests reach test support"},
		{"cmd/outflow", "handlers/apitest", "only tests reach test support"},
		{"webhook", "internal/platform/seal", "webhook stands alone"},
		{"gen/db", "internal/platform/db", "generated code imports nothing of ours"},
	} {
		got := violations([]pkg{{path: tc.from, imports: []string{tc.to}}})
		if tc.rule == "" {
			require.Empty(t, got, "%s -> %s is allowed", tc.from, tc.to)
			continue
		}
		want := fmt.Sprintf("%s imports %s (rule %q)", tc.from, tc.to, tc.rule)
		require.True(t, slices.ContainsFunc(got, func(v string) bool { return strings.HasPrefix(v, want) }),
			"%s -> %s should break %q; got %q", tc.from, tc.to, tc.rule, got)
	}
}

func TestTestSupportAndTheCompositionRootMayImportAnything(t *testing.T) {
	t.Parallel()
	require.Empty(t, violations([]pkg{
		{path: "internal/testkit/dbtest", imports: []string{"internal/platform/db", "handlers", "jobs", "gen/api"}},
		{path: "handlers/apitest", imports: []string{"cmd/outflow/app", "internal/testkit/dbtest", "gen/api"}},
		{path: "cmd/outflow/app", imports: []string{"handlers", "jobs", "oauth", "internal/eventing/delivery"}},
		{path: "internal/eventing/delivery", imports: []string{"webhook", "gen/db", "internal/platform/seal", "internal/trail/audit"}},
	}))
}
