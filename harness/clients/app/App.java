import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

public class App {
    public static void main(String[] args) throws Exception {
        long pid = ProcessHandle.current().pid();
        String nonce = UUID.randomUUID().toString();
        Service service = new Service();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        System.out.println("READY " + pid + " " + nonce);
        System.out.flush();
        String line;
        while ((line = in.readLine()) != null) {
            int counter = service.next();
            System.out.println("PROBE " + pid + " " + nonce + " " + counter + " " + service.value());
            System.out.flush();
        }
    }
}
