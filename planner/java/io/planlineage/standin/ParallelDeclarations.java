package io.planlineage.standin;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

import org.apache.flink.table.operations.Operation;
import org.apache.flink.table.operations.command.SetOperation;

/**
 * A job's leading CREATE TABLE statements converted on two threads at once: the job's own and a
 * helper with a TableEnvironment of its own, on the core that the caller, waiting for the answer,
 * leaves idle. Converting a CREATE TABLE (parsing it, merging its schema, resolving its computed
 * columns and watermark, each through Flink's validator) is most of what a warm job costs beyond
 * the bare compile of its INSERTs: 3.8 of 25 ms for the benchmark corpus' median job.
 *
 * <p>Converting does not change an environment, and a CREATE TABLE reads nothing that the
 * statements before it in such a run declare, so these conversions may run ahead and out of
 * order; the job then runs each statement's operations in its own environment in script order.
 * The run is the CREATE TABLE statements (not CTAS) that follow nothing but SETs, which the
 * helper applies to its environment first. A conversion that fails out of order (LIKE of a table
 * of the run, a catalog not there yet) is done again in order by the job, so every error is the
 * one the job would meet on its own. Only a JVM that compiles one job at a time has a helper (a
 * backfill's JVM with several threads keeps its cores busy).
 */
final class ParallelDeclarations {

    /** The helper's one thread: a daemon, which never keeps the JVM alive. */
    private final ExecutorService helper = Executors.newSingleThreadExecutor(task -> {
        Thread thread = new Thread(task, "planlineage-declarations");
        thread.setDaemon(true);
        return thread;
    });
    /** The helper's environment, used on its thread only, for jobs whose settings have `key`. */
    private Environment environment;
    private String key;

    /** Readies the helper's environment for the settings the next job most likely has, between jobs. */
    void prepare(String settings, Supplier<Environment> make) {
        helper.execute(() -> {
            try {
                environmentFor(settings, make);
            } catch (Throwable error) {
                environment = null; // the next job's helper tries again, or the job converts alone
            }
        });
    }

    /**
     * Starts converting the job's run of leading tables on the helper; null when the run has fewer
     * than two (nothing to share).
     *
     * @param sql the job's statements
     * @param kinds what each statement is, as the request says ("set", "create-table", ...)
     * @param settings the key of the job's environment settings (see Jobs)
     */
    Run start(List<String> sql, List<String> kinds, String settings, Supplier<Environment> make) {
        int first = 0;
        while (first < kinds.size() && "set".equals(kinds.get(first))) {
            first++;
        }
        int end = first;
        while (end < kinds.size() && "create-table".equals(kinds.get(end))) {
            end++;
        }
        if (end - first < 2) {
            return null;
        }
        Run run = new Run(sql, first, end);
        List<String> sets = sql.subList(0, first);
        helper.execute(() -> {
            Environment mine;
            try {
                mine = environmentFor(settings, make);
            } catch (Throwable error) {
                return; // the job converts every table itself
            }
            if (!sets.isEmpty()) {
                environment = null; // SET changes it: the next job's helper gets a new one
            }
            run.help(mine, sets);
        });
        return run;
    }

    private Environment environmentFor(String settings, Supplier<Environment> make) {
        if (environment == null || !settings.equals(key)) {
            environment = null;
            environment = make.get();
            key = settings;
        }
        return environment;
    }

    /** One job's run of tables: each converted once, by whichever thread claims it first. */
    static final class Run {
        private static final Object FAILED = new Object();
        private final List<String> sql;
        private final int first;
        private final int end;
        /** Per table of the run: its operations, FAILED, or null while not converted. */
        private final Object[] converted;
        private final boolean[] claimed;
        /** How many tables the helper converted (whether or not the job could use them). */
        private int helped;

        private Run(List<String> sql, int first, int end) {
            this.sql = sql;
            this.first = first;
            this.end = end;
            this.converted = new Object[end - first];
            this.claimed = new boolean[end - first];
        }

        boolean covers(int index) {
            return index >= first && index < end;
        }

        /**
         * The operations of statement `index`, whose predecessors the job has run: converted by the
         * helper, or here (with later tables of the run while the helper is busy with this one).
         * Null when an out-of-order conversion failed: the job converts the statement itself.
         */
        @SuppressWarnings("unchecked")
        List<Operation> take(int index, Session session) throws Exception {
            while (true) {
                int mine;
                synchronized (this) {
                    Object done = converted[index - first];
                    if (done != null) {
                        return done == FAILED ? null : (List<Operation>) done;
                    }
                    mine = claim(index);
                    if (mine < 0) {
                        wait(); // the helper is converting this one
                        continue;
                    }
                }
                if (mine == index) {
                    return session.parse(sql.get(index)); // in order: its failure is the job's
                }
                Object result;
                try {
                    result = session.parse(sql.get(mine));
                } catch (Throwable error) {
                    result = FAILED;
                }
                put(mine, result, false);
            }
        }

        /** The job is done with the run (or failed in it): the helper takes no more of it. */
        synchronized int finish() {
            Arrays.fill(claimed, true);
            return helped;
        }

        /** On the helper's thread: the job's leading SETs, then tables until none is left. */
        private void help(Environment environment, List<String> sets) {
            try {
                for (String set : sets) {
                    for (Operation operation : environment.tEnv.getParser().parse(set)) {
                        if (operation instanceof SetOperation) {
                            Session.applySet(environment.tEnv, (SetOperation) operation);
                        }
                    }
                }
            } catch (Throwable error) {
                return; // the job meets the same SET and reports it
            }
            while (true) {
                int mine;
                synchronized (this) {
                    mine = claim(first);
                }
                if (mine < 0) {
                    return;
                }
                Object result;
                try {
                    result = environment.tEnv.getParser().parse(sql.get(mine));
                } catch (Throwable error) {
                    result = FAILED;
                }
                put(mine, result, true);
            }
        }

        /** (Holding the lock.) The first unclaimed table at or after `from`, now claimed; -1: none. */
        private int claim(int from) {
            for (int i = from - first; i < claimed.length; i++) {
                if (!claimed[i]) {
                    claimed[i] = true;
                    return i + first;
                }
            }
            return -1;
        }

        private synchronized void put(int index, Object result, boolean byHelper) {
            converted[index - first] = result;
            if (byHelper) {
                helped++;
            }
            notifyAll();
        }
    }
}
