/*
 * R4jRecorder.java - records resilience4j 2.4.0's own CircuitBreaker and Retry
 * decisions for fusebox's conformance suite (tests/conformance/README.md).
 *
 *   java -cp LIBCLASSES:. R4jRecorder circuitbreaker|retry SEED RANDOM_CASES > cases.jsonl
 *
 * Compiled by record.sh against the library's src/main trees at the tag; nothing of the
 * library is copied here. Time is a fake java.time.Clock (CircuitBreakerConfig.clock()); the
 * CircuitBreaker's timers (automaticTransitionFromOpenToHalfOpenEnabled,
 * maxWaitDurationInHalfOpenState) run on the executor SchedulerFactory hands out, which is
 * replaced by a deterministic one: before each script line at time T, every timer due at or
 * before T runs, in due order, with the clock set to its due time. The Retry's sleeps go
 * through RetryImpl.setSleepFunction; its randomized waits draw Math.random(), which is
 * pinned to 0 and to the largest double below 1 to record the range each wait is drawn from.
 *
 * The script language is the one of tests/diff/resilience/driver.c:
 *   call T ok|fail [DUR]   a call at T ms that ends at T + DUR ms
 *   admit T ID             call ID (0..63) asks at T ms (prints admitted/rejected)
 *   result T ID ok|fail    call ID ends at T ms (its duration: T - its admission)
 *   result T ID cancel     call ID is cancelled at T ms (releasePermission())
 *   retry fail K           one Retry call whose first K attempts fail (K = -1: all)
 *   retryrange fail K      the same for a randomized wait: each wait's range
 * and the expected lines are the JSON lines the driver prints.
 */
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.core.IntervalBiFunction;
import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.retry.internal.RetryImpl;

import java.io.PrintStream;
import java.lang.reflect.Field;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

public final class R4jRecorder {

    /* ---- fake time ---- */

    static final class FakeClock extends Clock {
        long ms;

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(ms);
        }

        @Override
        public long millis() {
            return ms;
        }
    }

    static final FakeClock CLOCK = new FakeClock();

    static final class Task implements ScheduledFuture<Object> {
        final long due;
        final long seq;
        final Runnable run;
        boolean cancelled, done;

        Task(long due, long seq, Runnable run) {
            this.due = due;
            this.seq = seq;
            this.run = run;
        }

        public long getDelay(TimeUnit unit) {
            return unit.convert(due - CLOCK.ms, TimeUnit.MILLISECONDS);
        }

        public int compareTo(Delayed o) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
        }

        public boolean cancel(boolean interrupt) {
            if (done) return false;
            cancelled = true;
            return true;
        }

        public boolean isCancelled() {
            return cancelled;
        }

        public boolean isDone() {
            return done || cancelled;
        }

        public Object get() {
            return null;
        }

        public Object get(long t, TimeUnit u) {
            return null;
        }
    }

    /* A single-threaded scheduler run by hand: tasks run when time is advanced past them. */
    static final class FakeScheduler extends AbstractExecutorService
        implements ScheduledExecutorService {
        final List<Task> tasks = new ArrayList<>();
        long seq;

        public ScheduledFuture<?> schedule(Runnable r, long delay, TimeUnit unit) {
            Task t = new Task(CLOCK.ms + unit.toMillis(delay), seq++, r);
            tasks.add(t);
            return t;
        }

        public <V> ScheduledFuture<V> schedule(Callable<V> c, long delay, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }

        public ScheduledFuture<?> scheduleAtFixedRate(Runnable r, long a, long b, TimeUnit u) {
            throw new UnsupportedOperationException();
        }

        public ScheduledFuture<?> scheduleWithFixedDelay(Runnable r, long a, long b, TimeUnit u) {
            throw new UnsupportedOperationException();
        }

        public void execute(Runnable r) {
            r.run();
        }

        public void shutdown() {}

        public List<Runnable> shutdownNow() {
            return new ArrayList<>();
        }

        public boolean isShutdown() {
            return false;
        }

        public boolean isTerminated() {
            return false;
        }

        public boolean awaitTermination(long t, TimeUnit u) {
            return true;
        }

        /* Run every live task due at or before t (earliest first), then set the clock to t. */
        void advance(long t) {
            for (;;) {
                Task next = null;
                for (Task k : tasks)
                    if (!k.cancelled && !k.done && k.due <= t &&
                        (next == null || k.due < next.due || (k.due == next.due && k.seq < next.seq)))
                        next = k;
                if (next == null) break;
                if (next.due > CLOCK.ms) CLOCK.ms = next.due;
                next.done = true;
                next.run.run();
            }
            tasks.removeIf(k -> k.cancelled || k.done);
            if (t > CLOCK.ms) CLOCK.ms = t;
        }

        void reset() {
            tasks.clear();
        }
    }

    static final FakeScheduler SCHEDULER = new FakeScheduler();

    static sun.misc.Unsafe unsafe() throws Exception {
        Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        return (sun.misc.Unsafe) f.get(null);
    }

    /* Put `value` into a static final field (the library's scheduler, Math's Random). */
    @SuppressWarnings("deprecation")
    static void setStatic(Class<?> c, String name, Object value) throws Exception {
        Field f = c.getDeclaredField(name);
        sun.misc.Unsafe u = unsafe();
        u.putObject(u.staticFieldBase(f), u.staticFieldOffset(f), value);
    }

    static void installScheduler() throws Exception {
        Class<?> holder =
            Class.forName("io.github.resilience4j.circuitbreaker.internal.SchedulerFactory$SchedulerFactoryInstance");
        io.github.resilience4j.circuitbreaker.internal.SchedulerFactory.getInstance().getScheduler();
        setStatic(holder, "lazyScheduler", SCHEDULER);
        if (io.github.resilience4j.circuitbreaker.internal.SchedulerFactory.getInstance().getScheduler() !=
            SCHEDULER)
            throw new IllegalStateException("the scheduler could not be replaced");
    }

    /* Math.random() draws from this: a fixed value while recording a range's end. */
    static final class PinnedRandom extends Random {
        double value;

        @Override
        public double nextDouble() {
            return value;
        }
    }

    static final PinnedRandom PINNED = new PinnedRandom();

    static void installRandom() throws Exception {
        Math.random(); /* initialise the holder */
        setStatic(Class.forName("java.lang.Math$RandomNumberGeneratorHolder"), "randomNumberGenerator",
                  PINNED);
        PINNED.value = 0.25;
        if (Math.random() != 0.25) throw new IllegalStateException("Math.random could not be pinned");
    }

    /* ---- JSON out ---- */

    static String q(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    static String val(Object v) {
        if (v instanceof String) return q((String) v);
        if (v instanceof List) {
            StringBuilder b = new StringBuilder("[");
            for (Object o : (List<?>) v) b.append(b.length() > 1 ? ", " : "").append(val(o));
            return b.append("]").toString();
        }
        return String.valueOf(v);
    }

    /*
     * What a call through RestTemplate throws for each outcome (Spring's classes, as the
     * stand-ins in stubs/ declare them): 5xx HttpServerErrorException, 429
     * HttpClientErrorException.TooManyRequests, a timeout ResourceAccessException.
     */
    static RuntimeException thrown(String outcome) {
        switch (outcome) {
            case "fail": return new org.springframework.web.client.HttpServerErrorException("503");
            case "ratelimit":
                return new org.springframework.web.client.HttpClientErrorException.TooManyRequests("429");
            case "timeout": return new org.springframework.web.client.ResourceAccessException("timeout");
            default: throw new IllegalArgumentException("outcome " + outcome);
        }
    }

    @SuppressWarnings("unchecked")
    static Class<? extends Throwable>[] classes(Object names) {
        List<?> l = (List<?>) names;
        Class<? extends Throwable>[] out = new Class[l.size()];
        try {
            for (int i = 0; i < out.length; i++)
                out[i] = (Class<? extends Throwable>) Class.forName((String) l.get(i));
        } catch (ClassNotFoundException e) {
            throw new IllegalArgumentException(e);
        }
        return out;
    }

    static List<String> names(String... xs) {
        return java.util.Arrays.asList(xs);
    }

    static String obj(Map<String, Object> m) {
        StringBuilder b = new StringBuilder("{");
        for (Map.Entry<String, Object> e : m.entrySet()) {
            if (b.length() > 1) b.append(", ");
            b.append(q(e.getKey())).append(": ").append(val(e.getValue()));
        }
        return b.append("}").toString();
    }

    /* A duration as fusebox and Spring Boot both read it: "250ms", "2s". */
    static Duration dur(Object v) {
        String s = (String) v;
        if (s.endsWith("ms")) return Duration.ofMillis(Long.parseLong(s.substring(0, s.length() - 2)));
        if (s.endsWith("s")) return Duration.ofSeconds(Long.parseLong(s.substring(0, s.length() - 1)));
        throw new IllegalArgumentException("duration " + s);
    }

    static String ms(long n) {
        return n % 1000 == 0 && n > 0 ? (n / 1000) + "s" : n + "ms";
    }

    /* ---- CircuitBreaker ---- */

    static final String[] STATES = {"closed", "open", "half_open"};

    static String stateName(CircuitBreaker.State s) {
        switch (s) {
            case CLOSED: return "closed";
            case OPEN: return "open";
            case HALF_OPEN: return "half_open";
            default: return s.name().toLowerCase();
        }
    }

    static CircuitBreakerConfig cbConfig(Map<String, Object> k) {
        CircuitBreakerConfig.Builder b = CircuitBreakerConfig.custom().clock(CLOCK);
        for (Map.Entry<String, Object> e : k.entrySet()) {
            Object v = e.getValue();
            switch (e.getKey()) {
                case "failureRateThreshold": b.failureRateThreshold(((Number) v).floatValue()); break;
                case "slowCallRateThreshold": b.slowCallRateThreshold(((Number) v).floatValue()); break;
                case "slowCallDurationThreshold": b.slowCallDurationThreshold(dur(v)); break;
                case "permittedNumberOfCallsInHalfOpenState":
                    b.permittedNumberOfCallsInHalfOpenState((Integer) v); break;
                case "maxWaitDurationInHalfOpenState": b.maxWaitDurationInHalfOpenState(dur(v)); break;
                case "slidingWindowType":
                    b.slidingWindowType(CircuitBreakerConfig.SlidingWindowType.valueOf((String) v)); break;
                case "slidingWindowSize": b.slidingWindowSize((Integer) v); break;
                case "minimumNumberOfCalls": b.minimumNumberOfCalls((Integer) v); break;
                case "waitDurationInOpenState": b.waitDurationInOpenState(dur(v)); break;
                case "automaticTransitionFromOpenToHalfOpenEnabled":
                    b.automaticTransitionFromOpenToHalfOpenEnabled((Boolean) v); break;
                case "recordExceptions": b.recordExceptions(classes(v)); break;
                case "ignoreExceptions": b.ignoreExceptions(classes(v)); break;
                default: throw new IllegalArgumentException("key " + e.getKey());
            }
        }
        return b.build();
    }

    static final class Held {
        final boolean admitted;
        final long at;

        Held(boolean admitted, long at) {
            this.admitted = admitted;
            this.at = at;
        }
    }

    static List<String> runBreaker(Map<String, Object> keys, List<String> script, boolean stage) {
        SCHEDULER.reset();
        CLOCK.ms = 0;
        List<String> out = new ArrayList<>();
        CircuitBreaker cb = CircuitBreaker.of("conformance", cbConfig(keys));
        cb.getEventPublisher().onStateTransition(ev -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("t", CLOCK.ms);
            m.put("from", stateName(ev.getStateTransition().getFromState()));
            m.put("to", stateName(ev.getStateTransition().getToState()));
            out.add(obj(m));
        });
        Map<String, Held> held = new HashMap<>();
        Map<String, CompletableFuture<String>> stages = new HashMap<>();
        for (String line : script) {
            String[] w = line.split(" ");
            long t = Long.parseLong(w[1]);
            SCHEDULER.advance(t);
            switch (w[0]) {
                case "admit":
                    if (stage) {
                        /* the library's own decorator: a stage the script completes or cancels */
                        CompletableFuture<String> f = new CompletableFuture<>();
                        CompletionStage<String> p = CircuitBreaker.decorateCompletionStage(cb, () -> f).get();
                        boolean ok = !p.toCompletableFuture().isCompletedExceptionally();
                        Map<String, Object> m = new LinkedHashMap<>();
                        m.put("t", t);
                        m.put("call", ok ? "admitted" : "rejected");
                        out.add(obj(m));
                        if (ok) stages.put(w[2], f);
                        break;
                    }
                    /* fall through */
                case "call": {
                    boolean ok = cb.tryAcquirePermission();
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("t", t);
                    m.put("call", ok ? "admitted" : "rejected");
                    out.add(obj(m));
                    if (w[0].equals("admit")) {
                        held.put(w[2], new Held(ok, t));
                        break;
                    }
                    if (!ok) break;
                    long d = w.length > 3 ? Long.parseLong(w[3]) : 0;
                    SCHEDULER.advance(t + d);
                    finish(cb, w[2], d);
                    break;
                }
                case "result": {
                    CompletableFuture<String> f = stages.remove(w[2]);
                    if (f != null) {
                        if (w[3].equals("cancel"))
                            f.cancel(true);
                        else if (w[3].equals("ok"))
                            f.complete("ok");
                        else
                            f.completeExceptionally(thrown(w[3]));
                        break;
                    }
                    Held h = held.remove(w[2]);
                    if (h == null || !h.admitted) break;
                    if (w[3].equals("cancel"))
                        cb.releasePermission();
                    else
                        finish(cb, w[3], t - h.at);
                    break;
                }
                case "state": {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("t", t);
                    m.put("state", stateName(cb.getState()));
                    out.add(obj(m));
                    break;
                }
                default:
                    throw new IllegalArgumentException("line " + line);
            }
        }
        return out;
    }

    static void finish(CircuitBreaker cb, String outcome, long d) {
        if (outcome.equals("ok"))
            cb.onSuccess(d, TimeUnit.MILLISECONDS);
        else
            cb.onError(d, TimeUnit.MILLISECONDS, thrown(outcome));
    }

    /* ---- Retry ---- */

    /* CommonRetryConfigurationProperties.configureRetryIntervalFunction (framework-common, 2.4.0). */
    static RetryConfig retryConfig(Map<String, Object> k) {
        RetryConfig.Builder<Object> b = RetryConfig.custom();
        Duration wait = k.containsKey("waitDuration") ? dur(k.get("waitDuration")) : null;
        boolean expo = Boolean.TRUE.equals(k.get("enableExponentialBackoff"));
        boolean rnd = Boolean.TRUE.equals(k.get("enableRandomizedWait"));
        Double mult = k.containsKey("exponentialBackoffMultiplier")
            ? ((Number) k.get("exponentialBackoffMultiplier")).doubleValue() : null;
        Double factor = k.containsKey("randomizedWaitFactor")
            ? ((Number) k.get("randomizedWaitFactor")).doubleValue() : null;
        Duration max = k.containsKey("exponentialMaxWaitDuration") ? dur(k.get("exponentialMaxWaitDuration")) : null;
        IntervalFunction f = null;
        if (wait != null && wait.toMillis() >= 0) {
            if (expo && rnd) {
                if (max != null && factor != null && mult != null)
                    f = IntervalFunction.ofExponentialRandomBackoff(wait, mult, factor, max);
                else if (factor != null && mult != null)
                    f = IntervalFunction.ofExponentialRandomBackoff(wait, mult, factor);
                else if (mult != null)
                    f = IntervalFunction.ofExponentialRandomBackoff(wait, mult);
                else
                    f = IntervalFunction.ofExponentialRandomBackoff(wait);
            } else if (expo) {
                if (max != null && mult != null)
                    f = IntervalFunction.ofExponentialBackoff(wait, mult, max);
                else if (mult != null)
                    f = IntervalFunction.ofExponentialBackoff(wait, mult);
                else
                    f = IntervalFunction.ofExponentialBackoff(wait);
            } else if (rnd) {
                f = factor != null ? IntervalFunction.ofRandomized(wait, factor) : IntervalFunction.ofRandomized(wait);
            } else {
                b.waitDuration(wait);
            }
        }
        if (f != null) b.intervalBiFunction(IntervalBiFunction.ofIntervalFunction(f));
        if (k.containsKey("maxAttempts")) b.maxAttempts((Integer) k.get("maxAttempts"));
        if (k.containsKey("retryExceptions")) b.retryExceptions(classes(k.get("retryExceptions")));
        /* the Retry's ignoreExceptions, named retryIgnoreExceptions in the preset */
        if (k.containsKey("retryIgnoreExceptions")) b.ignoreExceptions(classes(k.get("retryIgnoreExceptions")));
        return b.build();
    }

    /* One Retry call whose first k attempts throw; the sleeps it asks for, in ms. */
    static List<Long> retryOnce(RetryConfig cfg, String outcome, int k, int[] attempts, boolean[] success) {
        List<Long> sleeps = new ArrayList<>();
        RetryImpl.setSleepFunction(sleeps::add);
        Retry r = Retry.of("conformance", cfg);
        int[] n = {0};
        try {
            Retry.decorateCheckedSupplier(r, () -> {
                n[0]++;
                if (k < 0 || n[0] <= k) throw thrown(outcome);
                return "ok";
            }).get();
            success[0] = true;
        } catch (Throwable e) {
            success[0] = false;
        }
        attempts[0] = n[0];
        return sleeps;
    }

    static final double BELOW_ONE = Math.nextDown(1.0);

    static List<String> runRetry(Map<String, Object> keys, List<String> script) {
        List<String> out = new ArrayList<>();
        RetryConfig cfg = retryConfig(keys);
        boolean random = Boolean.TRUE.equals(keys.get("enableRandomizedWait")) && keys.containsKey("waitDuration");
        for (String line : script) {
            String[] w = line.split(" ");
            int k = Integer.parseInt(w[2]);
            int[] attempts = {0};
            boolean[] success = {false};
            PINNED.value = 0.0;
            List<Long> lo = retryOnce(cfg, w[1], k, attempts, success);
            PINNED.value = BELOW_ONE;
            List<Long> hi = retryOnce(cfg, w[1], k, attempts, success);
            for (int i = 0; i < lo.size(); i++) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("retry", i + 1);
                if (random) {
                    m.put("delay_us_min", lo.get(i) * 1000);
                    m.put("delay_us_max", hi.get(i) * 1000);
                } else {
                    if (!lo.get(i).equals(hi.get(i))) throw new IllegalStateException("a wait drew a number");
                    m.put("delay_us", lo.get(i) * 1000);
                    m.put("u", "[]");
                }
                out.add(obj(m).replace("\"[]\"", "[]"));
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("attempts", attempts[0]);
            /* RetryImpl.ContextImpl.onError tests the exception predicate first */
            m.put("end", success[0] ? "success"
                                    : !cfg.getExceptionPredicate().test(thrown(w[1])) ? "not_retryable" : "attempts");
            out.add(obj(m));
        }
        return out;
    }

    /* ---- cases ---- */

    static final class Case {
        final String name;
        final Map<String, Object> keys = new LinkedHashMap<>();
        final List<String> script = new ArrayList<>();
        String skip;   /* why fusebox does not model it (the case is recorded, not replayed) */
        boolean stage; /* admit through decorateCompletionStage; cancel cancels the stage */

        Case(String name) {
            this.name = name;
        }

        Case k(String key, Object v) {
            keys.put(key, v);
            return this;
        }

        Case s(String... lines) {
            for (String l : lines) script.add(l);
            return this;
        }

        Case skip(String why) {
            skip = why;
            return this;
        }

        Case stage() {
            stage = true;
            return this;
        }
    }

    static void emit(PrintStream out, Case c, boolean breaker, int random) {
        if (!breaker && Boolean.TRUE.equals(c.keys.get("enableRandomizedWait")) && c.keys.containsKey("waitDuration"))
            c.script.replaceAll(l -> l.startsWith("retry ") ? "retryrange " + l.substring(6) : l);
        List<String> expect = breaker ? runBreaker(c.keys, c.script, c.stage) : runRetry(c.keys, c.script);
        Map<String, Object> fb = new LinkedHashMap<>();
        fb.put("preset", "resilience4j");
        fb.putAll(c.keys);
        if (!breaker) fb.put("slidingWindowSize", 1024); /* the breaker stays out of the way */
        StringBuilder b = new StringBuilder();
        b.append("{\"name\": ").append(q(c.name));
        if (random >= 0) b.append(", \"random\": ").append(random);
        if (c.skip != null) b.append(", \"skip\": ").append(q(c.skip));
        b.append(", \"fusebox\": ").append(obj(fb));
        Map<String, Object> lib = new LinkedHashMap<>();
        if (c.stage) lib.put("decorate", "decorateCompletionStage");
        for (Map.Entry<String, Object> e : c.keys.entrySet())
            lib.put(e.getKey().equals("retryIgnoreExceptions") ? "ignoreExceptions" : e.getKey(), e.getValue());
        b.append(", \"lib\": ").append(obj(lib));
        b.append(", \"script\": [");
        for (int i = 0; i < c.script.size(); i++) b.append(i > 0 ? ", " : "").append(q(c.script.get(i)));
        b.append("], \"expect\": [").append(String.join(", ", expect)).append("]}");
        out.println(b);
    }

    static List<Case> breakerEdges() {
        List<Case> l = new ArrayList<>();
        l.add(new Case("COUNT_BASED: the rate exactly at failureRateThreshold opens (>=)")
                  .k("slidingWindowSize", 4).k("minimumNumberOfCalls", 4).k("failureRateThreshold", 50)
                  .s("call 0 ok", "call 10 fail", "call 20 ok", "call 30 fail", "call 40 ok"));
        l.add(new Case("COUNT_BASED: below minimumNumberOfCalls nothing trips, the minimum-th result does")
                  .k("slidingWindowSize", 10).k("minimumNumberOfCalls", 3).k("failureRateThreshold", 50)
                  .s("call 0 fail", "call 10 fail", "call 20 fail", "call 30 ok"));
        l.add(new Case("COUNT_BASED: minimumNumberOfCalls above slidingWindowSize is capped at the window")
                  .k("slidingWindowSize", 2).k("minimumNumberOfCalls", 5).k("failureRateThreshold", 50)
                  .s("call 0 ok", "call 10 fail", "call 20 ok"));
        l.add(new Case("COUNT_BASED: the window rolls, the oldest outcome leaves")
                  .k("slidingWindowSize", 3).k("minimumNumberOfCalls", 3).k("failureRateThreshold", 67)
                  .s("call 0 fail", "call 10 ok", "call 20 ok", "call 30 fail", "call 40 fail"));
        l.add(new Case("waitDurationInOpenState: rejected at the deadline, half-open 1 ms after it")
                  .k("slidingWindowSize", 1).k("minimumNumberOfCalls", 1).k("waitDurationInOpenState", "1s")
                  .k("permittedNumberOfCallsInHalfOpenState", 1)
                  .s("call 0 fail", "call 999 ok", "call 1000 ok", "call 1001 ok", "call 1002 ok"));
        l.add(new Case("automaticTransitionFromOpenToHalfOpenEnabled: half-open at the deadline by the timer")
                  .k("slidingWindowSize", 1).k("minimumNumberOfCalls", 1).k("waitDurationInOpenState", "1s")
                  .k("automaticTransitionFromOpenToHalfOpenEnabled", true).k("permittedNumberOfCallsInHalfOpenState", 1)
                  .s("call 0 fail", "call 999 ok", "state 5000", "call 5000 ok"));
        l.add(new Case("automaticTransition: a call exactly at the deadline is a half-open trial")
                  .k("slidingWindowSize", 1).k("minimumNumberOfCalls", 1).k("waitDurationInOpenState", "1s")
                  .k("automaticTransitionFromOpenToHalfOpenEnabled", true).k("permittedNumberOfCallsInHalfOpenState", 1)
                  .s("call 100 fail", "call 1100 fail", "call 2100 ok"));
        l.add(new Case("half-open decides after min(minimumNumberOfCalls, permitted) outcomes, not capped by the window")
                  .k("slidingWindowSize", 1).k("minimumNumberOfCalls", 6).k("permittedNumberOfCallsInHalfOpenState", 2)
                  .k("waitDurationInOpenState", "50ms")
                  .s("call 0 fail", "call 100 ok", "call 200 ok", "call 300 ok", "call 400 ok"));
        l.add(new Case("half-open: permitted calls then rejections until they report; the rate decides")
                  .k("slidingWindowSize", 2).k("minimumNumberOfCalls", 2).k("permittedNumberOfCallsInHalfOpenState", 3)
                  .k("waitDurationInOpenState", "100ms")
                  .s("call 0 fail", "call 10 fail", "admit 200 0", "admit 201 1", "admit 202 2", "admit 203 3",
                     "result 210 0 fail", "result 220 1 ok", "result 230 2 ok", "call 240 ok"));
        l.add(new Case("half-open: a failed rate re-opens for waitDurationInOpenState")
                  .k("slidingWindowSize", 2).k("minimumNumberOfCalls", 2).k("permittedNumberOfCallsInHalfOpenState", 2)
                  .k("waitDurationInOpenState", "100ms")
                  .s("call 0 fail", "call 10 fail", "call 200 fail", "call 210 ok", "call 300 ok", "call 311 ok"));
        l.add(new Case("maxWaitDurationInHalfOpenState: a timer from entering half-open; open counts from it")
                  .k("slidingWindowSize", 1).k("minimumNumberOfCalls", 1).k("permittedNumberOfCallsInHalfOpenState", 2)
                  .k("waitDurationInOpenState", "1s").k("maxWaitDurationInHalfOpenState", "500ms")
                  .s("call 0 fail", "admit 1001 0", "call 1900 ok", "call 2501 ok", "call 2502 ok", "result 2600 0 ok"));
        l.add(new Case("maxWaitDurationInHalfOpenState with the automatic transition: a loop of timers")
                  .k("slidingWindowSize", 1).k("minimumNumberOfCalls", 1).k("permittedNumberOfCallsInHalfOpenState", 1)
                  .k("waitDurationInOpenState", "1s").k("maxWaitDurationInHalfOpenState", "300ms")
                  .k("automaticTransitionFromOpenToHalfOpenEnabled", true)
                  .s("call 0 fail", "admit 1000 0", "state 4000", "result 4100 0 ok", "call 4100 ok", "call 4500 ok"));
        l.add(new Case("maxWaitDurationInHalfOpenState: a result exactly at the deadline comes after the timer")
                  .k("slidingWindowSize", 1).k("minimumNumberOfCalls", 1).k("permittedNumberOfCallsInHalfOpenState", 1)
                  .k("waitDurationInOpenState", "1s").k("maxWaitDurationInHalfOpenState", "200ms")
                  .s("call 0 fail", "admit 1001 0", "result 1201 0 ok", "call 1202 ok", "call 2202 ok"));
        l.add(new Case("TIME_BASED: no evaluation at admission; expired buckets count at the next result")
                  .k("slidingWindowType", "TIME_BASED").k("slidingWindowSize", 2).k("minimumNumberOfCalls", 1)
                  .k("failureRateThreshold", 60)
                  .s("call 0 ok", "call 1400 fail", "call 2000 ok", "call 2100 fail", "call 2200 ok"));
        l.add(new Case("TIME_BASED: one bucket per epoch second, a result lands in the second it ends in")
                  .k("slidingWindowType", "TIME_BASED").k("slidingWindowSize", 3).k("minimumNumberOfCalls", 3)
                  .k("failureRateThreshold", 50)
                  .s("call 0 fail", "call 999 ok", "call 1000 ok", "call 2999 fail", "call 3000 fail", "call 3500 ok 600"));
        l.add(new Case("TIME_BASED: the whole window expires after slidingWindowSize seconds of quiet")
                  .k("slidingWindowType", "TIME_BASED").k("slidingWindowSize", 2).k("minimumNumberOfCalls", 2)
                  .k("failureRateThreshold", 50)
                  .s("call 0 fail", "call 5000 fail", "call 5100 fail"));
        l.add(new Case("slowCallDurationThreshold: a call longer than it is slow (>), exactly at it is not")
                  .k("slidingWindowSize", 2).k("minimumNumberOfCalls", 2).k("slowCallRateThreshold", 100)
                  .k("slowCallDurationThreshold", "100ms")
                  .s("call 0 ok 100", "call 200 ok 101", "call 400 ok 101", "call 600 ok 101"));
        l.add(new Case("slow calls in half-open re-open it by the slow-call rate")
                  .k("slidingWindowSize", 1).k("minimumNumberOfCalls", 1).k("slowCallRateThreshold", 50)
                  .k("slowCallDurationThreshold", "50ms").k("permittedNumberOfCallsInHalfOpenState", 2)
                  .k("waitDurationInOpenState", "100ms")
                  .s("call 0 ok 60", "call 200 ok 10", "call 300 ok 70", "call 500 ok 10", "call 600 ok 10"));
        l.add(new Case("a result of a call admitted while closed counts in half-open")
                  .k("slidingWindowSize", 2).k("minimumNumberOfCalls", 2).k("permittedNumberOfCallsInHalfOpenState", 2)
                  .k("waitDurationInOpenState", "100ms")
                  .s("admit 0 0", "call 10 fail", "call 20 fail", "call 200 ok", "result 210 0 ok"));
        l.add(new Case("a result arriving while open is lost")
                  .k("slidingWindowSize", 1).k("minimumNumberOfCalls", 1).k("permittedNumberOfCallsInHalfOpenState", 1)
                  .k("waitDurationInOpenState", "100ms")
                  .s("admit 0 0", "call 10 fail", "result 50 0 ok", "call 200 ok"));
        l.add(new Case("cancel of a call admitted before the transition frees a half-open permit")
                  .k("slidingWindowSize", 1).k("minimumNumberOfCalls", 1).k("permittedNumberOfCallsInHalfOpenState", 1)
                  .k("waitDurationInOpenState", "100ms").k("minimumNumberOfCalls", 2).k("slidingWindowSize", 2)
                  .s("admit 0 0", "call 10 fail", "call 20 fail", "admit 200 1", "admit 201 2", "result 205 0 cancel",
                     "admit 206 3", "admit 207 4"));
        l.add(new Case("decorateCompletionStage: a cancelled stage is onError(CancellationException), a failure")
                  .stage().k("slidingWindowSize", 2).k("minimumNumberOfCalls", 2)
                  .k("waitDurationInOpenState", "100ms").k("permittedNumberOfCallsInHalfOpenState", 1)
                  .s("admit 0 0", "result 5 0 cancel", "admit 10 1", "result 20 1 cancel", "admit 30 2",
                     "admit 120 3", "result 130 3 cancel", "admit 131 4")
                  .skip("a cancelled CompletionStage (decorateCompletionStage) completes with CancellationException, "
                        + "which onError records as a failure unless ignoreExceptions names it; fusebox's cancel is "
                        + "decorateFuture's: releasePermission(), counted nowhere"));
        l.add(new Case("decorateCompletionStage: completed stages count as the plain calls do")
                  .stage().k("slidingWindowSize", 2).k("minimumNumberOfCalls", 2)
                  .k("waitDurationInOpenState", "100ms").k("permittedNumberOfCallsInHalfOpenState", 1)
                  .s("admit 0 0", "admit 1 1", "result 5 0 fail", "result 6 1 ratelimit", "admit 7 2",
                     "admit 107 3", "result 110 3 ok", "admit 111 4", "result 112 4 fail"));
        l.add(new Case("cancel of a half-open trial gives its permit back")
                  .k("slidingWindowSize", 1).k("minimumNumberOfCalls", 1).k("permittedNumberOfCallsInHalfOpenState", 1)
                  .k("waitDurationInOpenState", "100ms")
                  .s("call 0 fail", "admit 200 0", "admit 201 1", "result 202 0 cancel", "admit 203 2", "result 210 2 ok"));
        String web = "org.springframework.web.client.";
        l.add(new Case("ignoreExceptions HttpClientErrorException: 429s count nowhere, 5xx still open it")
                  .k("slidingWindowSize", 2).k("minimumNumberOfCalls", 2)
                  .k("ignoreExceptions", names(web + "HttpClientErrorException"))
                  .s("call 0 ratelimit", "call 10 ratelimit", "call 20 ratelimit", "call 30 fail", "call 40 fail",
                     "call 50 ok"));
        l.add(new Case("recordExceptions HttpServerErrorException: a 429 counts as a success")
                  .k("slidingWindowSize", 2).k("minimumNumberOfCalls", 2)
                  .k("recordExceptions", names(web + "HttpServerErrorException"))
                  .s("call 0 ratelimit", "call 10 ratelimit", "call 20 fail", "call 30 ok"));
        l.add(new Case("an ignored result in half-open gives its permit back")
                  .k("slidingWindowSize", 1).k("minimumNumberOfCalls", 1).k("permittedNumberOfCallsInHalfOpenState", 1)
                  .k("waitDurationInOpenState", "100ms")
                  .k("ignoreExceptions", names(web + "HttpClientErrorException$TooManyRequests"))
                  .s("call 0 fail", "admit 200 0", "admit 201 1", "result 210 0 ratelimit", "admit 220 2",
                     "result 230 2 ok", "call 240 ratelimit"));
        l.add(new Case("recordExceptions RestClientException, ignoreExceptions TooManyRequests: ignore wins")
                  .k("slidingWindowSize", 2).k("minimumNumberOfCalls", 2)
                  .k("recordExceptions", names(web + "RestClientException"))
                  .k("ignoreExceptions", names(web + "HttpClientErrorException$TooManyRequests"))
                  .s("call 0 ratelimit", "call 10 ratelimit", "call 20 fail", "call 30 ratelimit", "call 40 fail"));
        l.add(new Case("cancel in closed changes nothing")
                  .k("slidingWindowSize", 2).k("minimumNumberOfCalls", 2)
                  .s("admit 0 0", "result 5 0 cancel", "call 10 fail", "call 20 ok"));
        return l;
    }

    static Object pick(Random r, Object... xs) {
        return xs[r.nextInt(xs.length)];
    }

    static Case randomBreaker(Random r, int i) {
        Case c = new Case("random sequence " + i);
        boolean time = r.nextInt(3) == 0;
        if (time) c.k("slidingWindowType", "TIME_BASED");
        c.k("slidingWindowSize", time ? 1 + r.nextInt(4) : 1 + r.nextInt(8));
        c.k("minimumNumberOfCalls", 1 + r.nextInt(8));
        c.k("failureRateThreshold", pick(r, 20, 25, 34, 50, 60, 75, 100));
        if (r.nextInt(3) == 0) {
            c.k("slowCallRateThreshold", pick(r, 30, 50, 100));
            c.k("slowCallDurationThreshold", pick(r, "50ms", "150ms"));
        }
        c.k("permittedNumberOfCallsInHalfOpenState", 1 + r.nextInt(4));
        long open = (long) (int) pick(r, 100, 300, 1000);
        c.k("waitDurationInOpenState", ms(open));
        if (r.nextInt(3) == 0) c.k("maxWaitDurationInHalfOpenState", ms((int) pick(r, 150, 400, 1000)));
        if (r.nextInt(3) == 0) c.k("automaticTransitionFromOpenToHalfOpenEnabled", true);
        String web = "org.springframework.web.client.";
        if (r.nextInt(4) == 0)
            c.k("recordExceptions", names(web + (String) pick(r, "HttpServerErrorException", "RestClientException",
                                                                "HttpStatusCodeException")));
        if (r.nextInt(4) == 0)
            c.k("ignoreExceptions", names(web + (String) pick(r, "HttpClientErrorException",
                                                                "HttpClientErrorException$TooManyRequests")));
        long t = r.nextInt(50);
        int ops = 10 + r.nextInt(40);
        List<String> open_ids = new ArrayList<>();
        boolean automatic = c.keys.containsKey("automaticTransitionFromOpenToHalfOpenEnabled");
        for (int j = 0; j < ops; j++) {
            int kind = r.nextInt(10);
            int o = r.nextInt(100);
            String out = o < 35 ? "fail" : o < 45 ? "ratelimit" : "ok";
            if (kind < 5) {
                long d = r.nextInt(4) == 0 ? r.nextInt(250) : 0;
                c.s("call " + t + " " + out + (d > 0 ? " " + d : ""));
                t += d;
            } else if (kind < 7 && open_ids.size() < 64) {
                String id = null;
                for (int k = 0; id == null; k++)
                    if (!open_ids.contains(String.valueOf(k))) id = String.valueOf(k);
                c.s("admit " + t + " " + id);
                open_ids.add(id);
            } else if (kind < 9 && !open_ids.isEmpty()) {
                String id = open_ids.remove(r.nextInt(open_ids.size()));
                c.s("result " + t + " " + id + " " + (r.nextInt(5) == 0 ? "cancel" : out));
            } else if (automatic) {
                /* getState() makes no lazy transition; with the timers there is none to make */
                c.s("state " + t);
            } else {
                c.s("call " + t + " " + out);
            }
            t += (long) (int) pick(r, 0, 1, 7, 40, 99, 100, 101, 250, 400, 999, 1000);
        }
        return c;
    }

    static List<Case> retryEdges() {
        List<Case> l = new ArrayList<>();
        l.add(new Case("maxAttempts counts the first call; the default wait is 500 ms").s("retry fail -1", "retry fail 1", "retry fail 2"));
        l.add(new Case("maxAttempts 1: no retry").k("maxAttempts", 1).s("retry fail -1", "retry fail 0"));
        l.add(new Case("waitDuration constant").k("maxAttempts", 4).k("waitDuration", "250ms").s("retry fail -1", "retry fail 2"));
        l.add(new Case("waitDuration 0: no wait").k("maxAttempts", 3).k("waitDuration", "0ms").s("retry fail -1"));
        l.add(new Case("exponential backoff: the default multiplier 1.5").k("maxAttempts", 5).k("waitDuration", "100ms")
                  .k("enableExponentialBackoff", true).s("retry fail -1"));
        l.add(new Case("exponential backoff with multiplier and a cap").k("maxAttempts", 7).k("waitDuration", "100ms")
                  .k("enableExponentialBackoff", true).k("exponentialBackoffMultiplier", 3)
                  .k("exponentialMaxWaitDuration", "2s").s("retry fail -1"));
        l.add(new Case("exponential backoff: a fractional product is truncated to whole ms").k("maxAttempts", 6).k("waitDuration", "7ms")
                  .k("enableExponentialBackoff", true).k("exponentialBackoffMultiplier", 1.3).s("retry fail -1"));
        l.add(new Case("enableExponentialBackoff without waitDuration: the default constant 500 ms").k("maxAttempts", 4)
                  .k("enableExponentialBackoff", true).k("exponentialBackoffMultiplier", 2).s("retry fail -1"));
        l.add(new Case("enableRandomizedWait: the default factor 0.5").k("maxAttempts", 4).k("waitDuration", "1s")
                  .k("enableRandomizedWait", true).s("retry fail -1"));
        l.add(new Case("enableRandomizedWait with randomizedWaitFactor").k("maxAttempts", 3).k("waitDuration", "200ms")
                  .k("enableRandomizedWait", true).k("randomizedWaitFactor", 0.2).s("retry fail -1"));
        String web = "org.springframework.web.client.";
        l.add(new Case("retryExceptions HttpServerErrorException: a 429 or a timeout is not retried")
                  .k("maxAttempts", 3).k("waitDuration", "100ms").k("retryExceptions", names(web + "HttpServerErrorException"))
                  .s("retry fail -1", "retry ratelimit -1", "retry timeout -1", "retry fail 1"));
        l.add(new Case("retryExceptions RestClientException with ignoreExceptions HttpClientErrorException")
                  .k("maxAttempts", 3).k("waitDuration", "100ms").k("retryExceptions", names(web + "RestClientException"))
                  .k("retryIgnoreExceptions", names(web + "HttpClientErrorException"))
                  .s("retry ratelimit -1", "retry fail 1", "retry timeout -1"));
        l.add(new Case("ignoreExceptions alone: everything else is retried")
                  .k("maxAttempts", 4).k("waitDuration", "10ms").k("retryIgnoreExceptions", names(web + "ResourceAccessException"))
                  .s("retry timeout -1", "retry fail -1", "retry ratelimit 2"));
        l.add(new Case("exponential randomized backoff with a cap").k("maxAttempts", 8).k("waitDuration", "100ms")
                  .k("enableExponentialBackoff", true).k("enableRandomizedWait", true).k("exponentialBackoffMultiplier", 2)
                  .k("randomizedWaitFactor", 0.5).k("exponentialMaxWaitDuration", "1s").s("retry fail -1"));
        return l;
    }

    static Case randomRetry(Random r, int i) {
        Case c = new Case("random retry " + i);
        c.k("maxAttempts", 1 + r.nextInt(8));
        if (r.nextInt(6) != 0) c.k("waitDuration", ms((int) pick(r, 0, 1, 3, 10, 100, 250, 1000)));
        boolean expo = r.nextBoolean(), rnd = r.nextInt(3) == 0;
        if (expo) c.k("enableExponentialBackoff", true);
        if (rnd) c.k("enableRandomizedWait", true);
        if (expo && r.nextBoolean()) c.k("exponentialBackoffMultiplier", pick(r, 1.1, 1.5, 2, 2.5, 3));
        if (expo && r.nextBoolean()) c.k("exponentialMaxWaitDuration", ms((int) pick(r, 50, 300, 2000)));
        if (rnd && r.nextBoolean()) c.k("randomizedWaitFactor", pick(r, 0.1, 0.25, 0.5, 0.9));
        String web = "org.springframework.web.client.";
        if (r.nextInt(4) == 0)
            c.k("retryExceptions", names(web + (String) pick(r, "HttpServerErrorException", "RestClientException",
                                                               "HttpStatusCodeException", "ResourceAccessException")));
        if (r.nextInt(4) == 0)
            c.k("retryIgnoreExceptions", names(web + (String) pick(r, "HttpClientErrorException",
                                                                     "HttpClientErrorException$TooManyRequests",
                                                                     "ResourceAccessException")));
        int n = 1 + r.nextInt(3);
        for (int j = 0; j < n; j++)
            c.s("retry " + pick(r, "fail", "fail", "ratelimit", "timeout") + " " + (r.nextInt(4) == 0 ? -1 : r.nextInt(9)));
        return c;
    }

    /* The Retry refuses some configurations (an IntervalFunction of 0 ms, at startup or at the
     * first retry): fusebox refuses them too (a load error), so they are not sequences. */
    static boolean builds(Case c) {
        try {
            retryConfig(c.keys).getIntervalBiFunction().apply(1, null);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: R4jRecorder circuitbreaker|retry SEED RANDOM_CASES");
            System.exit(2);
        }
        boolean breaker = args[0].equals("circuitbreaker");
        long seed = Long.parseLong(args[1]);
        int n = Integer.parseInt(args[2]);
        installScheduler();
        installRandom();
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        for (Case c : breaker ? breakerEdges() : retryEdges()) emit(out, c, breaker, -1);
        Random r = new Random(seed);
        for (int i = 0; i < n; i++) {
            Case c = breaker ? randomBreaker(r, i) : randomRetry(r, i);
            while (!breaker && !builds(c)) c = randomRetry(r, i);
            emit(out, c, breaker, i);
        }
        out.flush();
    }
}
