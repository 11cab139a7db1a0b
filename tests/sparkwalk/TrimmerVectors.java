// Regenerates trimmer-vectors.json from openlineage-spark's own trimmer classes (the pinned
// 1.53.0 jar, tests/artifacts.toml), one name per line of the input file:
//   javac -cp OL.jar TrimmerVectors.java
//   java -cp OL.jar:slf4j-api.jar:commons-lang3.jar:. TrimmerVectors names.txt > trimmer-vectors.json
// (slf4j-api and commons-lang3 are in any PySpark's jars/). Per name: what each default trimmer
// makes of it (null: it cannot trim), and the name after every trimmer, repeatedly.
import io.openlineage.client.dataset.DatasetConfig;
import io.openlineage.client.dataset.partition.trimmer.DatasetNameTrimmer;
import io.openlineage.client.dataset.partition.trimmer.DateTrimmer;
import io.openlineage.client.dataset.partition.trimmer.KeyValueTrimmer;
import io.openlineage.client.dataset.partition.trimmer.MultiDirDateTrimmer;
import io.openlineage.client.dataset.partition.trimmer.YearMonthTrimmer;
import io.openlineage.client.utils.DatasetIdentifier;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;

public class TrimmerVectors {
  static String quoted(String s) {
    return s == null ? "null" : "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  public static void main(String[] args) throws Exception {
    List<String> names = Files.readAllLines(Paths.get(args[0]));
    DatasetNameTrimmer[] trimmers = {
      new DateTrimmer(), new KeyValueTrimmer(), new MultiDirDateTrimmer(), new YearMonthTrimmer()
    };
    StringBuilder out = new StringBuilder("[\n");
    for (int i = 0; i < names.size(); i++) {
      String name = names.get(i);
      out.append(i == 0 ? "" : ",\n").append(" {\"name\": ").append(quoted(name));
      for (DatasetNameTrimmer trimmer : trimmers) {
        String result = trimmer.canTrim(name) ? quoted(trimmer.trim(name)) : "null";
        out.append(", \"").append(trimmer.getClass().getSimpleName()).append("\": ").append(result);
      }
      String all =
          new DatasetIdentifier(name, "ns")
              .withTrimmedName(DatasetConfig.defaultConfig().getDatasetNameTrimmers())
              .getName();
      out.append(", \"trimmed\": ").append(quoted(all)).append("}");
    }
    System.out.print(out.append("\n]\n"));
  }
}
