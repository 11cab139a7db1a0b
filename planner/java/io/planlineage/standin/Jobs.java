package io.planlineage.standin;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

import org.apache.flink.table.operations.Operation;

/**
 * The compile server's jobs, each one request line in and one answer line out: the request's
 * JSON in, the answer's JSON out (see compile_server.py for both shapes), the whole job done in
 * the JVM; the plan's JSON text is spliced into the answer as Flink wrote it, never re-encoded.
 *
 * <p>Every job runs in its own {@link Session} on a TableEnvironment that is new or was reset
 * to be as fresh as a new one ({@link Environment}), so nothing a job declares, sets or loads is
 * visible to the next. Between jobs {@link #prepare} readies the next job's environment, while the
 * caller reads the last answer.
 */
public final class Jobs {

    /** Converts a job's leading tables alongside the job; null when there is no helper. */
    private final ParallelDeclarations declarations;

    /**
     * @param helper whether a helper thread converts each job's leading tables alongside it (see
     *     ParallelDeclarations): for a long-lived JVM that compiles one job at a time
     */
    public Jobs(boolean helper) {
        this.declarations = helper ? new ParallelDeclarations() : null;
    }

    private String spareKey;
    private Environment spare;
    /** The last request, as answer() read it: prepare() readies an environment for its settings. */
    private Map<String, Object> lastRequest;
    /** The last job's session: its environment is reused when reset leaves it as fresh. */
    private Session last;
    /** Whether the current job runs on an environment a previous job left (and reset). */
    private boolean reused;
    private boolean spareReused;

    /**
     * Readies the environment of the next job, between jobs: the last job's, reset, when it
     * allows that (see Environment), else a new one with the settings of the last request (most
     * jobs of a caller share theirs). Failures are left for the next job to meet and report.
     */
    public void prepare() {
        Session done = last;
        Map<String, Object> request = lastRequest;
        last = null;
        lastRequest = null;
        spare = null;
        if (request == null) {
            return; // the request was unreadable: the next job makes its own environment
        }
        try {
            Environment environment = null;
            if (done != null && done.reusable() && done.environment().reset()) {
                environment = done.environment();
            }
            spareReused = environment != null;
            spare = environment != null ? environment : newEnvironment(request);
            spareKey = sessionKey(request);
            if (declarations != null) {
                declarations.prepare(spareKey, () -> newEnvironment(request));
            }
        } catch (Throwable error) {
            spare = null;
        }
    }

    /**
     * The answer line to one request line: "id" first (the caller finds its answer by that
     * prefix), the plan spliced in as Flink wrote it, and where the time went: the whole job here
     * ("server_ms"), compilePlan alone ("compile_ms") and the statements that declare the sinks
     * ("sink_sql_ms": the INSERTs parsed and validated; with compile_ms, what compilePlanSql costs).
     */
    public String answer(String requestJson) {
        long started = System.nanoTime();
        Object id = null;
        Map<String, Object> answer = new LinkedHashMap<>();
        Result result = null;
        try {
            Map<String, Object> request = map(Json.read(requestJson));
            lastRequest = request;
            id = request.get("id");
            Session session;
            try {
                session = sessionFor(request);
            } catch (Throwable error) { // the JVM refused the environment itself
                session = null;
                answer.put("ok", false);
                answer.put("error", error(null, reason(error)));
            }
            if (session != null) {
                // 1.15 loads a job's functions through the thread's class loader: the one with its jars.
                // Otherwise the class path's, with its service files read once: Flink's legacy table
                // factories are looked up through the thread's loader for every table a statement
                // names (1.5% of a warm JVM's time was spent reading them from the jars again).
                Thread thread = Thread.currentThread();
                ClassLoader previous = thread.getContextClassLoader();
                thread.setContextClassLoader(jobLoader != null ? jobLoader : ServiceFiles.OF_CLASS_PATH);
                try {
                    result = run(session, request);
                } finally {
                    thread.setContextClassLoader(previous);
                }
                answer.putAll(result.answer);
                answer.put("reused_environment", reused);
            }
        } catch (Throwable error) { // an unreadable request, or the JVM out of memory
            answer.clear();
            answer.put("ok", false);
            answer.put("error", error(null, reason(error)));
            result = null;
        }
        if (!Boolean.TRUE.equals(answer.get("ok"))) {
            last = null; // a failed job's environment is not worth the doubt: a new one next
        }
        StringBuilder out = new StringBuilder("{\"id\": ").append(Json.write(id)).append(", ");
        String body = Json.write(answer);
        out.append(body, 1, body.length() - 1);
        if (result != null && Boolean.TRUE.equals(answer.get("ok"))) {
            // Flink's JSON has line breaks between tokens only: spaces keep the answer one line.
            String plan = result.plan;
            if (plan != null) {
                plan = plan.replace('\n', ' ');
                plan = plan.indexOf('\r') < 0 ? plan : plan.replace('\r', ' ');
            }
            out.append(",\"plan\":").append(plan == null ? "null" : plan);
        }
        out.append(",\"timings\":{\"compile_ms\":").append(millis(result == null ? 0 : result.compileNanos));
        out.append(",\"sink_sql_ms\":").append(millis(result == null ? 0 : result.sinkStatementNanos));
        out.append(",\"server_ms\":").append(millis(System.nanoTime() - started)).append("}}");
        return out.toString();
    }

    private static double millis(long nanos) {
        return Math.round(nanos / 1e4) / 100.0;
    }

    private static final class Result {
        final Map<String, Object> answer = new LinkedHashMap<>();
        String plan;
        long compileNanos;
        /** The statements that declare the job's sinks (INSERT, STATEMENT SET, CTAS): parsed, validated. */
        long sinkStatementNanos;

        Result fail(Object statement, String message, Session session) {
            answer.put("ok", false);
            answer.put("error", error(statement, message + hint(session, message)));
            answer.put("stand_ins", standIns(session));
            return this;
        }

        /**
         * Says whether the failed statement used an undeclared table of a stand-in catalog whose
         * guessed columns may be why it failed ("guessed_tables"): when not, the failure is the
         * script's own even with stand-in catalogs, as it would be without them.
         */
        @SuppressWarnings("unchecked")
        Result guessed(boolean guessed) {
            ((Map<String, Object>) answer.get("error")).put("guessed_tables", guessed);
            return this;
        }
    }

    /** The class loader with the current job's jars (1.15, which has no ADD JAR), or null. */
    private ClassLoader jobLoader;

    private Session sessionFor(Map<String, Object> request) {
        Environment environment = spare;
        boolean fits = environment != null && sessionKey(request).equals(spareKey);
        spare = null;
        spareKey = null;
        reused = fits && spareReused;
        List<String> jars = strings(request.get("jars"));
        boolean jarsInLoader = !jars.isEmpty() && !Versions.ADD_JAR;
        jobLoader = jarsInLoader ? Versions.withJars(jars) : null;
        if (!fits || jarsInLoader) {
            environment = newEnvironment(request, jobLoader != null ? jobLoader : ServiceFiles.OF_CLASS_PATH);
            reused = false;
        }
        last = new Session(environment, new HashSet<>(strings(request.get("forced_stand_ins"))));
        if (jarsInLoader) {
            last.jarsInClassLoader();
        }
        return last;
    }

    private Result run(Session session, Map<String, Object> request) {
        Result result = new Result();
        try {
            for (Map.Entry<String, Object> hint : map(request.get("function_hints")).entrySet()) {
                Map<String, Object> usage = map(hint.getValue());
                Object kind = usage.get("kind");
                Object type = usage.get("type");
                session.hintFunction(hint.getKey(), kind == null ? "scalar" : kind.toString(),
                        type == null ? null : type.toString(), strings(usage.get("fields")));
            }
            for (Map.Entry<String, Object> table : map(request.get("table_schemas")).entrySet()) {
                List<String> names = new ArrayList<>();
                List<String> types = new ArrayList<>();
                for (Map.Entry<String, Object> column : map(table.getValue()).entrySet()) {
                    names.add(column.getKey());
                    types.add(String.valueOf(column.getValue()));
                }
                session.declareSchema(table.getKey(), names, types);
            }
        } catch (Throwable error) {
            result.answer.put("ok", false);
            result.answer.put("error", error(null, reason(error)));
            return result;
        }
        for (String jar : Versions.ADD_JAR ? strings(request.get("jars")) : Collections.<String>emptyList()) {
            try {
                session.execute("ADD JAR '" + jar.replace("'", "''") + "'");
            } catch (Throwable error) {
                Map<String, Object> failure = new LinkedHashMap<>();
                failure.put("statement", null);
                failure.put("jar", jar);
                failure.put("message", reason(error));
                result.answer.put("ok", false);
                result.answer.put("error", failure);
                return result;
            }
        }

        List<Object> statements = list(request.get("statements"));
        ParallelDeclarations.Run ahead = startAhead(request, statements);
        try {
            return runStatements(session, statements, ahead, result);
        } finally {
            if (ahead != null) {
                result.answer.put("converted_alongside", ahead.finish());
            }
        }
    }

    /** The job's leading tables converted alongside it, when it has a run of them (see ParallelDeclarations). */
    private ParallelDeclarations.Run startAhead(Map<String, Object> request, List<Object> statements) {
        if (declarations == null || !list(request.get("jars")).isEmpty()) {
            return null; // with jars, a table's types may need classes only the job's environment has
        }
        List<String> sql = new ArrayList<>();
        List<String> kinds = new ArrayList<>();
        for (Object item : statements) {
            Map<String, Object> statement = map(item);
            sql.add(String.valueOf(statement.get("sql")));
            kinds.add(String.valueOf(statement.get("kind")));
        }
        return declarations.start(sql, kinds, sessionKey(request), () -> newEnvironment(request));
    }

    private static Result runStatements(Session session, List<Object> statements, ParallelDeclarations.Run ahead,
            Result result) {
        List<Object> kinds = new ArrayList<>();
        List<Integer> sinkStatement = new ArrayList<>(); // which statement each collected sink came from
        // per statement: whether what was guessed of a stand-in catalog's tables may be why it fails
        List<Boolean> guessed = new ArrayList<>();
        for (int index = 0; index < statements.size(); index++) {
            Map<String, Object> statement = map(statements.get(index));
            int before = session.sinkCount();
            // Stand-in catalogs: each INSERT's target is prepared right before its statement runs.
            for (Object item : list(statement.get("inserts"))) {
                Map<String, Object> insert = map(item);
                List<String> columns = insert.get("columns") == null || list(insert.get("columns")).isEmpty()
                        ? null : strings(insert.get("columns"));
                try {
                    session.prepareInsert(String.valueOf(insert.get("target")), columns,
                            String.valueOf(insert.get("query")));
                } catch (Throwable ignored) {
                    // the INSERT itself then reports what is wrong
                }
            }
            long started = System.nanoTime();
            try {
                String sql = String.valueOf(statement.get("sql"));
                List<Operation> converted = ahead != null && ahead.covers(index) ? ahead.take(index, session) : null;
                kinds.add(converted != null ? session.apply(converted) : session.execute(sql));
            } catch (Throwable error) {
                return result.fail(index, reason(error), session).guessed(session.mayBlameGuesses());
            }
            guessed.add(session.mayBlameGuesses());
            long took = System.nanoTime() - started;
            if (session.sinkCount() > before) {
                result.sinkStatementNanos += took;
            }
            for (int i = before; i < session.sinkCount(); i++) {
                sinkStatement.add(index);
            }
        }

        Map<String, Object> tables = new LinkedHashMap<>();
        if (!sinkStatement.isEmpty()) {
            try {
                long started = System.nanoTime();
                result.plan = session.compile();
                result.compileNanos = System.nanoTime() - started;
            } catch (Throwable error) {
                Throwable last = error;
                Integer blamed = blame(session, sinkStatement);
                // A stand-in function's type may be what the planner refused (a sink column's):
                // the statement learns it and the job is compiled again (only after a refusal).
                for (int round = 0; round < MAX_RELEARNED && blamed != null
                        && reason(last).contains(SINK_TYPES); round++) {
                    String sql = String.valueOf(map(statements.get(blamed)).get("sql"));
                    if (!session.relearnSinks(sql, sinkStatement.indexOf(blamed),
                            sinkStatement.lastIndexOf(blamed) + 1 - sinkStatement.indexOf(blamed))) {
                        break;
                    }
                    try {
                        long started = System.nanoTime();
                        result.plan = session.compile();
                        result.compileNanos = System.nanoTime() - started;
                        last = null;
                        break;
                    } catch (Throwable again) {
                        last = again;
                        blamed = blame(session, sinkStatement);
                    }
                }
                if (last != null) {
                    return result.fail(blamed, reason(last), session)
                            .guessed(blamed == null || guessed.get(blamed));
                }
            }
            for (String identifier : tableIdentifiers(Json.read(result.plan))) {
                Map<String, Object> described = session.describe(identifier);
                if (described != null) {
                    tables.put((String) described.remove("identifier"), described);
                }
            }
        }
        result.answer.put("ok", true);
        result.answer.put("tables", tables);
        result.answer.put("kinds", kinds);
        result.answer.put("stand_ins", session.standInList());
        return result;
    }

    /** The refusal of a query's type by its sink, the one a stand-in's type is learnt from when planning. */
    private static final String SINK_TYPES = "Incompatible types for sink column";
    /** Statements whose sinks are parsed again to fit stand-in functions to the plan, per job. */
    private static final int MAX_RELEARNED = 8;

    /** The first statement whose sink fails on its own (compiling alone is the only way to ask). */
    private static Integer blame(Session session, List<Integer> sinkStatement) {
        for (int position = 0; position < sinkStatement.size(); position++) {
            try {
                session.compileOne(position);
            } catch (Throwable error) {
                return sinkStatement.get(position);
            }
        }
        return null;
    }

    /** Every table a plan names (as the plan quotes it), wherever a node embeds it. */
    static List<String> tableIdentifiers(Object plan) {
        List<String> found = new ArrayList<>();
        visit(plan, null, found);
        return found;
    }

    private static void visit(Object value, String key, List<String> found) {
        if (value instanceof Map) {
            Map<?, ?> node = (Map<?, ?>) value;
            Object identifier = node.get("identifier");
            if ("table".equals(key) && identifier instanceof String) {
                if (!found.contains(identifier)) {
                    found.add((String) identifier);
                }
                return;
            }
            for (Map.Entry<?, ?> child : node.entrySet()) {
                visit(child.getValue(), String.valueOf(child.getKey()), found);
            }
        } else if (value instanceof List) {
            for (Object item : (List<?>) value) {
                visit(item, key, found);
            }
        }
    }

    private static String hint(Session session, String message) {
        try {
            return session.standInHint(message);
        } catch (Throwable error) { // the failure itself is what gets reported
            return "";
        }
    }

    private static List<Object> standIns(Session session) {
        try {
            return session.standInList();
        } catch (Throwable error) { // the failure itself is what gets reported
            return new ArrayList<>();
        }
    }

    private static Environment newEnvironment(Map<String, Object> request) {
        return newEnvironment(request, ServiceFiles.OF_CLASS_PATH);
    }

    private static Environment newEnvironment(Map<String, Object> request, ClassLoader loader) {
        Map<String, String> config = new LinkedHashMap<>();
        for (Map.Entry<String, Object> entry : map(request.get("config")).entrySet()) {
            config.put(entry.getKey(), String.valueOf(entry.getValue()));
        }
        return Environment.create(Boolean.TRUE.equals(request.get("batch")), config, loader);
    }

    /** Jobs with equal keys get equal environments. */
    private static String sessionKey(Map<String, Object> request) {
        return Boolean.TRUE.equals(request.get("batch")) + "|" + new TreeMap<>(map(request.get("config")))
                + "|" + strings(request.get("forced_stand_ins"));
    }

    private static Map<String, Object> error(Object statement, String message) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("statement", statement);
        error.put("message", message);
        return error;
    }

    /**
     * Flink's own reason, without the Java stack: the top message (which names the failing
     * statement's problem) and, when it does not already say it, the innermost cause's.
     */
    /** A sentence said twice in a row: Flink wraps a validation error in one that repeats its head. */
    private static final Pattern REPEATED = Pattern.compile("([^.]{4,}?\\.)(?:\\s+\\1)+");

    static String reason(Throwable error) {
        return REPEATED.matcher(chain(error)).replaceAll("$1");
    }

    private static String chain(Throwable error) {
        List<String[]> messages = new ArrayList<>();
        Throwable cause = error;
        for (int seen = 0; cause != null && seen < 30; seen++) {
            messages.add(new String[] {cause.getClass().getName(), cause.getMessage()});
            Throwable next = cause.getCause();
            cause = next == null || next == cause ? null : next;
        }
        String first = messages.get(0)[1];
        String top = first != null && !first.isEmpty() ? first : messages.get(0)[0];
        String innerName = messages.get(messages.size() - 1)[0];
        String inner = messages.get(messages.size() - 1)[1];
        boolean hasInner = inner != null && !inner.isEmpty();
        if (messages.size() > 1 && hasInner && !top.contains(inner)) {
            return top.strip() + " Caused by: " + innerName + ": " + inner.strip();
        }
        if (messages.size() > 1 && !hasInner) {
            return top.strip() + " Caused by: " + innerName;
        }
        return top.strip();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object value) {
        return value instanceof Map ? (Map<String, Object>) value : new LinkedHashMap<>();
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object value) {
        return value instanceof List ? (List<Object>) value : new ArrayList<>();
    }

    private static List<String> strings(Object value) {
        List<String> out = new ArrayList<>();
        for (Object item : list(value)) {
            out.add(String.valueOf(item));
        }
        return out;
    }
}
