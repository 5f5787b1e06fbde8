import { describeDurableRefunds, useFrameworkEnvironment } from "./durable-refund-cases";

describeDurableRefunds("langchain", useFrameworkEnvironment());
