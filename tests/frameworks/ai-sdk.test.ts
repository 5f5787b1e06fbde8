import { describeDurableRefunds, useFrameworkEnvironment } from "./durable-refund-cases";

describeDurableRefunds("ai-sdk", useFrameworkEnvironment());
