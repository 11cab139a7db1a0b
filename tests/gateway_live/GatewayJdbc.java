import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

/**
 * Runs the statements of a file (one per line) through the Flink JDBC driver on one connection,
 * as a JDBC application would, and prints every value of every result set row as "row: value".
 * Usage: GatewayJdbc jdbc:flink://127.0.0.1:PORT statements.sql
 */
public class GatewayJdbc {
    public static void main(String[] args) throws Exception {
        // The bundle does not register its driver through META-INF/services.
        Class.forName("org.apache.flink.table.jdbc.FlinkDriver");
        try (Connection connection = DriverManager.getConnection(args[0]);
                Statement statement = connection.createStatement()) {
            for (String sql : Files.readAllLines(Path.of(args[1]))) {
                if (sql.isBlank()) {
                    continue;
                }
                if (statement.execute(sql)) {
                    try (ResultSet rows = statement.getResultSet()) {
                        int columns = rows.getMetaData().getColumnCount();
                        while (rows.next()) {
                            for (int column = 1; column <= columns; column++) {
                                System.out.println("row: " + rows.getString(column));
                            }
                        }
                    }
                }
            }
        }
    }
}
