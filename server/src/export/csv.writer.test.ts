import { csvCell, neutralise } from './csv.writer';

describe('csv.writer', () => {
  it('neutralises a formula after a separator followed by spaces, as one right after it', () => {
    expect(neutralise('x;=1+1')).toBe("x;'=1+1");
    expect(neutralise('x; =1+1')).toBe("x; '=1+1");
    expect(neutralise('x,   @SUM(A1)')).toBe("x,   '@SUM(A1)");
    expect(csvCell('x; =1+1')).toBe(`"x; '=1+1"`);
    expect(neutralise('x; 1+1')).toBe('x; 1+1');
  });

  it("writes a `'` of the value at those places twice, so dropping one there gives every value back", () => {
    expect([neutralise('=SUM(1)'), neutralise("'=SUM(1)"), neutralise("'quoted'"), neutralise("x; 'y")]).toEqual([
      "'=SUM(1)",
      "''=SUM(1)",
      "''quoted'",
      "x; ''y",
    ]);
    const back = (cell: string) => cell.replace(/^'/, '').replace(/([,;\t\r\n][ \t]*"*)'/g, '$1');
    for (const value of ['=SUM(1)', "'=SUM(1)", "''", "Ann;=1+1; '@x", "it's"]) expect(back(neutralise(value))).toBe(value);
  });
});
