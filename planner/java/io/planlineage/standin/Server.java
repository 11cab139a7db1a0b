package io.planlineage.standin;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The compile server's JVM: one request line of JSON on stdin, one answer line on stdout (see
 * compile_server.py for both shapes), until stdin closes. The caller talks to the JVM directly:
 * no py4j gateway and no Python in between, whose hops and socket round trips cost more than
 * the statements of a small job.
 *
 * <p>With {@code --threads N}, N jobs compile at once, each thread with its own {@link Jobs} and
 * so its own TableEnvironments; answers then come as jobs finish, not in request order (the
 * caller matches them by "id"). Threads of one JVM share its loaded classes and JIT-compiled
 * code, which is most of what a JVM's first hundred jobs cost: a backfill of many jobs runs
 * faster in one JVM with two threads than in two JVMs.
 */
public final class Server {
    private Server() {}

    public static void main(String[] args) throws IOException, InterruptedException {
        List<String> options = Arrays.asList(args);
        boolean prepareNext = options.contains("--prepare-next");
        int at = options.indexOf("--threads");
        int threads = at >= 0 && at + 1 < options.size() ? Math.max(1, Integer.parseInt(options.get(at + 1))) : 1;
        OutputStream answers = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16);
        // Whatever else would print to stdout (a library, a console logger) goes to the log.
        System.setOut(System.err);
        BufferedReader requests = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        send(answers, "{\"ready\": true}");
        if (threads == 1) {
            serveInTurn(requests, answers, prepareNext);
        } else {
            serveAtOnce(requests, answers, prepareNext, threads);
        }
        // A normal exit (a class-data archive being recorded is written now); threads a library
        // started must not keep the JVM alive once its caller has gone.
        System.exit(0);
    }

    /** Writes one line, encoded in one call rather than through a PrintStream's character encoder. */
    private static void send(OutputStream answers, String line) throws IOException {
        answers.write(line.getBytes(StandardCharsets.UTF_8));
        answers.write('\n');
        answers.flush();
    }

    /**
     * One job after the other, on the thread that reads them: handing each job to another thread
     * cost about 0.06 ms of a warm job's ~15 ms.
     */
    private static void serveInTurn(BufferedReader requests, OutputStream answers, boolean prepareNext)
            throws IOException {
        Jobs jobs = new Jobs(prepareNext); // long-lived and one job at a time: a helper pays off
        String line;
        while ((line = requests.readLine()) != null) {
            if (!line.isBlank()) {
                send(answers, jobs.answer(line));
                if (prepareNext) {
                    jobs.prepare(); // while the caller reads the answer
                }
            }
        }
    }

    /**
     * Up to `threads` jobs at once, each thread with Jobs of its own; answered as they finish. The
     * next request is read while a job runs.
     */
    private static void serveAtOnce(BufferedReader requests, OutputStream answers, boolean prepareNext, int threads)
            throws IOException, InterruptedException {
        ThreadLocal<Jobs> jobs = ThreadLocal.withInitial(() -> new Jobs(false));
        ExecutorService pool = Executors.newFixedThreadPool(threads, task -> {
            Thread thread = new Thread(task, "planlineage-jobs");
            thread.setDaemon(true);
            return thread;
        });
        String line;
        while ((line = requests.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            String request = line;
            pool.execute(() -> {
                Jobs mine = jobs.get();
                String answer = mine.answer(request);
                synchronized (answers) {
                    try {
                        send(answers, answer);
                    } catch (IOException gone) {
                        return; // the caller closed its end: its stdin closes too, which ends the JVM
                    }
                }
                if (prepareNext) {
                    mine.prepare(); // while the caller reads the answer
                }
            });
        }
        // Jobs already sent are answered before the JVM exits.
        pool.shutdown();
        pool.awaitTermination(1, TimeUnit.HOURS);
    }
}
