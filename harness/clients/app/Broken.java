public class Broken {
    int value() {
        return missingSymbol;
    }
}
