export default function Home() {
  return <main>Verity</main>;
}
