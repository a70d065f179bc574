import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;

/**
 * A Mexican Train bot in plain Java 17: {@code java -cp build/classes Bot}
 * speaks the protocol of spec/PROTOCOL.md on stdin/stdout.
 */
public final class Bot {
    private Bot() {}

    public static void main(String[] args) throws IOException {
        // Only protocol lines may reach the referee: keep the real stdout for
        // them and send anything else printed (a stray System.out.println) to the log.
        Writer out = new BufferedWriter(new OutputStreamWriter(
                new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8));
        System.setOut(System.err);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Session.run(in, out, System.err);
        // bye or end of input: exit with status 0.
    }
}
