import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;

/**
 * Runs Flink SQL cases for real, in this JVM's local mini cluster, with the OpenLineage
 * job-status-changed listener writing its events to a file: the producer planlineage must name
 * datasets like. Compiled and started by test_flink_producer.py against the Flink version's own
 * jars, the connector jars and openlineage-flink.
 *
 * <p>Arguments: one folder per case, holding {@code conf.properties} (the case's Flink
 * configuration: the listener, its file transport, the job name) and {@code statements/NNNN.sql}
 * (the case's statements in order). Each case gets a TableEnvironment of its own; every statement
 * is executed and a statement that starts a job is waited for until the job has finished (the
 * sources are bounded). One line per case on stdout: {@code CASE}, a tab, the case's folder, a tab,
 * and the error that stopped it, on one line (empty when it ran through); a print sink's rows are
 * on stdout too. A case whose configuration sets {@code rest.port} also gets one line per job:
 * {@code JOB}, the folder, the Flink JobID (hex) and the job's start time from the REST API (ms).
 */
public final class FlinkProducer {
    private FlinkProducer() {}

    public static void main(String[] args) throws Exception {
        for (String folder : args) {
            String error = "";
            try {
                runCase(Paths.get(folder));
            } catch (Throwable failure) { // the case's own SQL failed: said, and the next case runs
                error = firstLine(failure);
            }
            System.out.println("CASE\t" + folder + "\t" + error);
            System.out.flush();
        }
        System.exit(0); // the mini clusters' non-daemon threads must not keep the JVM alive
    }

    private static void runCase(Path folder) throws Exception {
        Properties properties = new Properties();
        try (var reader = Files.newBufferedReader(folder.resolve("conf.properties"), StandardCharsets.UTF_8)) {
            properties.load(reader);
        }
        Configuration conf = new Configuration();
        for (String key : properties.stringPropertyNames()) {
            conf.setString(key, properties.getProperty(key));
        }
        TableEnvironment env =
                TableEnvironment.create(EnvironmentSettings.newInstance().withConfiguration(conf).build());
        for (Path statement : statements(folder.resolve("statements"))) {
            TableResult result = env.executeSql(Files.readString(statement, StandardCharsets.UTF_8));
            if (result.getJobClient().isPresent()) {
                String restPort = properties.getProperty("rest.port");
                if (restPort != null) { // what a platform knows of the job: its id, and its start time from the REST API
                    JobID job = result.getJobClient().get().getJobID();
                    System.out.println("JOB\t" + folder + "\t" + job.toHexString() + "\t" + startTime(restPort, job));
                }
                result.await(); // bounded sources: the job finishes; its failure is the case's error
            }
        }
    }

    /** The job's {@code start-time} (ms) as the cluster's REST API reports it, as the listener reads it. */
    private static long startTime(String restPort, JobID job) throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        URI uri = URI.create("http://127.0.0.1:" + restPort + "/jobs/" + job);
        String body = client.send(HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.ofString()).body();
        Matcher start = Pattern.compile("\"start-time\"\\s*:\\s*(\\d+)").matcher(body);
        if (!start.find()) {
            throw new IllegalStateException("no start-time in " + uri + ": " + body);
        }
        return Long.parseLong(start.group(1));
    }

    private static List<Path> statements(Path folder) throws IOException {
        try (Stream<Path> files = Files.list(folder)) {
            List<Path> sorted = new ArrayList<>(files.sorted().toList());
            return sorted;
        }
    }

    private static String firstLine(Throwable failure) {
        Throwable root = failure;
        StringBuilder text = new StringBuilder(String.valueOf(failure));
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
            text.append(" <- ").append(root);
        }
        String line = text.toString().replace('\n', ' ').replace('\t', ' ');
        return line.length() > 800 ? line.substring(0, 800) : line;
    }
}
