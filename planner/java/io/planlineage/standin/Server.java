package io.planlineage.standin;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The compile server's JVM: one request line of JSON on stdin, one answer line on stdout (see
 * compile_server.py for both shapes), until stdin closes. The caller talks to the JVM directly:
 * no py4j gateway and no Python in between, whose hops and socket round trips cost more than
 * the statements of a small job.
 */
public final class Server {
    private Server() {}

    public static void main(String[] args) throws IOException {
        boolean prepareNext = Arrays.asList(args).contains("--prepare-next");
        PrintStream answers = new PrintStream(
                new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16), false, "UTF-8");
        // Whatever else would print to stdout (a library, a console logger) goes to the log.
        System.setOut(System.err);
        BufferedReader requests = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Jobs jobs = new Jobs();
        answers.print("{\"ready\": true}\n");
        answers.flush();
        String line;
        while ((line = requests.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            answers.print(jobs.answer(line));
            answers.print('\n');
            answers.flush();
            if (prepareNext) {
                jobs.prepare(line); // while the caller reads the answer
            }
        }
        // A normal exit (a class-data archive being recorded is written now); threads a library
        // started must not keep the JVM alive once its caller has gone.
        System.exit(0);
    }
}
