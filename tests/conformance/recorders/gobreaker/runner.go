// runner.go - runs conformance cases through gobreaker v2's TwoStepCircuitBreaker under a
// fake clock (record.sh builds it beside a copy of the library whose time.Now() calls read
// gobreaker.Now). Reads cases (JSON lines without "expect") on stdin, writes them with the
// decisions gobreaker made as "expect", in the driver's language and output
// (tests/diff/resilience/driver.c).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"gbrec/gobreaker"
)

var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
var nowUs int64
var out []json.RawMessage

// emit appends one decision, its keys in the driver's order.
func emit(t int64, kv ...string) {
	var b strings.Builder
	tj, _ := json.Marshal(tval(t))
	b.WriteString(`{"t": ` + string(tj))
	for i := 0; i < len(kv); i += 2 {
		fmt.Fprintf(&b, `, %q: %q`, kv[i], kv[i+1])
	}
	b.WriteString("}")
	out = append(out, json.RawMessage(b.String()))
}

type kase struct {
	Name    string            `json:"name"`
	Skip    string            `json:"skip,omitempty"`
	Random  *int64            `json:"random,omitempty"`
	Fusebox json.RawMessage   `json:"fusebox"`
	Lib     map[string]any    `json:"lib"`
	Script  []string          `json:"script"`
	Expect  []json.RawMessage `json:"expect"`
}

func tval(us int64) any {
	if us%1000 == 0 {
		return us / 1000
	}
	return json.Number(strconv.FormatFloat(float64(us)/1000, 'f', 3, 64))
}

func stateName(s gobreaker.State) string {
	switch s {
	case gobreaker.StateClosed:
		return "closed"
	case gobreaker.StateOpen:
		return "open"
	}
	return "half_open"
}

func parseMs(s string) int64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic("bad time " + s)
	}
	return int64(math.Round(v * 1000))
}

func errOf(outcome string) error {
	switch outcome {
	case "ok":
		return nil
	case "cancel":
		return context.Canceled
	}
	return errors.New(outcome)
}

func settings(lib map[string]any) gobreaker.Settings {
	st := gobreaker.Settings{Name: "conformance"}
	dur := func(k string) time.Duration {
		v, ok := lib[k]
		if !ok {
			return 0
		}
		d, err := time.ParseDuration(v.(string))
		if err != nil {
			panic(err)
		}
		return d
	}
	if v, ok := lib["MaxRequests"]; ok {
		st.MaxRequests = uint32(v.(float64))
	}
	st.Interval = dur("Interval")
	st.BucketPeriod = dur("BucketPeriod")
	st.Timeout = dur("Timeout")
	if r, ok := lib["ReadyToTrip"]; ok {
		n := uint32(r.(map[string]any)["ConsecutiveFailures"].(float64))
		st.ReadyToTrip = func(c gobreaker.Counts) bool { return c.ConsecutiveFailures > n }
	}
	st.OnStateChange = func(_ string, from, to gobreaker.State) {
		emit(nowUs, "from", stateName(from), "to", stateName(to))
	}
	return st
}

func run(c *kase) {
	out = []json.RawMessage{}
	nowUs = 0
	cb := gobreaker.NewTwoStepCircuitBreaker[any](settings(c.Lib))
	dones := map[int]func(error){}
	admit := func(t int64, id int) {
		nowUs = t
		done, err := cb.Allow()
		verdict := "admitted"
		if err != nil {
			verdict = "rejected"
			done = nil
		}
		dones[id] = done
		emit(t, "call", verdict)
	}
	result := func(t int64, id int, outcome string) {
		nowUs = t
		if d := dones[id]; d != nil {
			dones[id] = nil
			d(errOf(outcome))
		}
	}
	for _, l := range c.Script {
		f := strings.Fields(l)
		switch f[0] {
		case "call":
			t := parseMs(f[1])
			admit(t, -1)
			d := int64(0)
			if len(f) == 4 {
				d = parseMs(f[3])
			}
			result(t+d, -1, f[2])
		case "admit":
			id, _ := strconv.Atoi(f[2])
			admit(parseMs(f[1]), id)
		case "result":
			id, _ := strconv.Atoi(f[2])
			result(parseMs(f[1]), id, f[3])
		case "state":
			nowUs = parseMs(f[1])
			s := cb.State()
			emit(nowUs, "state", stateName(s))
		default:
			panic("unknown command " + f[0])
		}
	}
	c.Expect = out
}

func main() {
	gobreaker.Now = func() time.Time { return epoch.Add(time.Duration(nowUs) * time.Microsecond) }
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for in.Scan() {
		var c kase
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			panic(err)
		}
		run(&c) // skipped cases too: what gobreaker does is recorded all the same
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&c); err != nil {
			panic(err)
		}
	}
}
